/* chef_auth: Chef's signed headers and canonical request. The input's lines are the method,
 * path, X-Ops-UserId, X-Ops-Timestamp, X-Ops-Sign, X-Ops-Content-Hash, X-Ops-Server-API-Version
 * and the signature; the rest is the body. */
#include "auth/chef_auth.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = fuzz_text(data, size), *rest = text, *f[8];
    struct chef_signed_request req;
    enum chef_sign_version version;
    struct purser_error err;
    struct buf out = BUF_INIT;
    time_t when = 0;
    if (!text)
        return 0;
    for (int i = 0; i < 8; i++)
        f[i] = fuzz_line(rest, &rest);
    req = (struct chef_signed_request){.method = f[0],
                                       .path = f[1],
                                       .user_id = *f[2] ? f[2] : NULL,
                                       .timestamp = *f[3] ? f[3] : NULL,
                                       .sign = *f[4] ? f[4] : NULL,
                                       .content_hash = *f[5] ? f[5] : NULL,
                                       .server_api_version = *f[6] ? f[6] : NULL,
                                       .signature = *f[7] ? f[7] : NULL,
                                       .body = rest,
                                       .body_len = strlen(rest)};
    chef_auth_parse_time(f[3], &when);
    if (!chef_auth_check_headers(&req, when, CHEF_AUTH_SKEW, &version, &err)) {
        const char *key = "-----BEGIN PUBLIC KEY-----\nMFwwDQYJKoZIhvcNAQEBBQADSwAwSAJBAL\n"
                          "-----END PUBLIC KEY-----\n";
        size_t which;
        chef_auth_canonical(&out, &req, version);
        chef_auth_verify(&req, version, &key, 1, NULL, &which, &err);
    }
    buf_release(&out);
    free(text);
    return 0;
}
