/* 0003-config: defaults, loading, and errors that name the key. */
#include "config/config.h"
#include "tap.h"

#include <stdlib.h>

static int load(struct purser_config *cfg, const char *text, struct purser_error *err)
{
    return config_load_text(cfg, text, strlen(text), err);
}

int main(int argc, char **argv)
{
    struct purser_config cfg;
    struct purser_error err;
    struct buf described = BUF_INIT;
    tap_init(argc, argv);

    tap_is_int(config_init_defaults(&cfg), 0, "defaults");
    tap_is_int(cfg.workers, 0, "fcgi.workers defaults to 0 (one per CPU)");
    tap_is_int(cfg.max_requests, 10000, "fcgi.max_requests default");
    tap_is_int(cfg.max_body_bytes, 16777216, "http.max_body_bytes default");
    tap_is_str(cfg.db_name, "purser", "database.name default");
    tap_is_int(cfg.development_mode, 0, "development mode is off by default");
    config_release(&cfg);

    tap_is_int(load(&cfg, "", &err), 0, "an empty file is all defaults");
    tap_is_int(cfg.db_port, 3306, "database.port default");
    config_release(&cfg);

    tap_is_int(load(&cfg,
                    "fcgi:\n  workers: 3\n  socket: /tmp/x.sock\ndatabase:\n  port: 3307\n"
                    "auth:\n  development_mode: yes\n",
                    &err),
               0, "a file with several sections");
    tap_is_int(cfg.workers, 3, "fcgi.workers read");
    tap_is_str(cfg.fcgi_socket, "/tmp/x.sock", "fcgi.socket read");
    tap_is_int(cfg.db_port, 3307, "database.port read");
    tap_is_int(cfg.development_mode, 1, "YAML 1.1 'yes' is true");
    tap_is_int(cfg.max_requests, 10000, "keys not given keep their default");
    config_release(&cfg);

    tap_is_int(load(&cfg, "fcgi:\n  wrokers: 3\n", &err), PURSER_EINVAL, "unknown key refused");
    tap_is_str(err.message, "fcgi.wrokers: unknown key", "the message names the key");
    tap_is_int(cfg.workers, 0, "after a failure the defaults stand");
    config_release(&cfg);

    tap_is_int(load(&cfg, "fgci:\n  workers: 3\n", &err), PURSER_EINVAL, "unknown section refused");
    tap_is_str(err.message, "fgci: unknown section", "the message names the section");
    config_release(&cfg);

    tap_is_int(load(&cfg, "fcgi:\n  workers: many\n", &err), PURSER_EINVAL, "wrong type refused");
    tap_is_str(err.message, "fcgi.workers: must be an integer from 0 to 256",
               "the message names the key and range");
    config_release(&cfg);

    tap_is_int(load(&cfg, "database:\n  port: 70000\n", &err), PURSER_EINVAL,
               "out of range refused");
    config_release(&cfg);

    tap_is_int(load(&cfg, "http:\n  external_url: https://purser.example.com:8443\n", &err), 0,
               "http.external_url: https://HOST:PORT");
    tap_is_str(cfg.external_url, "https://purser.example.com:8443", "  taken as given");
    config_release(&cfg);
    tap_is_int(load(&cfg, "http:\n  external_url: http://purser.example.com\n", &err),
               PURSER_EINVAL, "http.external_url: plain http refused");
    tap_is_str(err.message, "http.external_url: must be https://HOST[:PORT] (no path)",
               "  naming the key");
    config_release(&cfg);
    tap_is_int(load(&cfg, "http:\n  external_url: https://purser.example.com/\n", &err),
               PURSER_EINVAL, "http.external_url: a path (even /) refused");
    config_release(&cfg);

    tap_is_int(load(&cfg, "auth:\n  development_mode: 1\n", &err), PURSER_EINVAL,
               "an integer is not a boolean");
    tap_is_str(err.message, "auth.development_mode: must be true or false", "named");
    config_release(&cfg);

    tap_is_int(load(&cfg, "fcgi: [1, 2]\n", &err), PURSER_EINVAL, "a section must be a mapping");
    config_release(&cfg);

    tap_is_int(load(&cfg, "fcgi:\n  workers: 1\n  workers: 2\n", &err), PURSER_EINVAL,
               "a key twice is refused");
    tap_is_int(err.line, 3, "at the line of the second one");
    config_release(&cfg);

    tap_is_int(load(&cfg, "fcgi:\n  workers: [\n", &err), PURSER_EINVAL, "malformed YAML refused");
    tap_ok(err.line > 0, "with a position");
    config_release(&cfg);

    tap_is_int(config_load(&cfg, "/nonexistent/purser.yaml", &err), PURSER_ENOTFOUND,
               "a missing file");
    config_release(&cfg);

    tap_is_int(config_describe(&described), 0, "describe");
    tap_ok(strstr(buf_cstr(&described), "fcgi.workers: 0  # ") != NULL,
           "describe lists fcgi.workers with its default");
    tap_ok(strstr(buf_cstr(&described), "database.password_file: \"\"") != NULL,
           "and string defaults quoted");
    buf_release(&described);
    return tap_done();
}
