/* one-select.c: bench-only baselines for bench/policy_fetch. The least a FastCGI program can do
 * for a policy fetch: one indexed, prepared SELECT of the revision body, written back as is.
 * No routing, no authentication, no cache. With --memory, the true ceiling: the body is
 * selected once at start and every request is answered from memory, with no database (a
 * FastCGI "hello" of the same bytes), closing as purser does. Not part of purser.
 * Usage: one-select [--memory] SOCKET DB_SOCKET USER PASSWORD_FILE DATABASE REVISION_ID WORKERS */
#include <fcgiapp.h>
#include <mysql.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

static char body[1 << 20];
static int from_memory; /* --memory: select once, answer every request from memory */

static int serve(int fd, char **argv)
{
    char password[256] = "";
    FILE *f = fopen(argv[4], "r");
    MYSQL *db = mysql_init(NULL);
    MYSQL_STMT *stmt;
    MYSQL_BIND param, result;
    long long id = atoll(argv[6]);
    unsigned long length = 0;
    FCGX_Request req;
    int plain_close =
        from_memory || (getenv("ONE_SELECT_PLAIN_CLOSE") && atoi(getenv("ONE_SELECT_PLAIN_CLOSE")));

    if (f) {
        if (fgets(password, sizeof(password), f))
            password[strcspn(password, "\n")] = '\0';
        fclose(f);
    }
    if (!mysql_real_connect(db, NULL, argv[3], password, argv[5], 0, argv[2], 0)) {
        fprintf(stderr, "one-select: %s\n", mysql_error(db));
        return 1;
    }
    stmt = mysql_stmt_init(db);
    const char *sql = "SELECT body FROM policy_revisions WHERE id = ?";
    mysql_stmt_prepare(stmt, sql, strlen(sql));
    memset(&param, 0, sizeof(param));
    param.buffer_type = MYSQL_TYPE_LONGLONG;
    param.buffer = &id;
    mysql_stmt_bind_param(stmt, &param);
    memset(&result, 0, sizeof(result));
    result.buffer_type = MYSQL_TYPE_STRING;
    result.buffer = body;
    result.buffer_length = sizeof(body);
    result.length = &length;
    if (from_memory) {
        int found = mysql_stmt_execute(stmt) == 0 && mysql_stmt_bind_result(stmt, &result) == 0 &&
                    mysql_stmt_fetch(stmt) == 0;
        mysql_stmt_close(stmt);
        mysql_close(db);
        if (!found) {
            fprintf(stderr, "one-select: revision %lld not found\n", id);
            return 1;
        }
    }
    FCGX_InitRequest(&req, fd, 0);
    while (FCGX_Accept_r(&req) >= 0) {
        int ok = from_memory;
        if (!ok) {
            mysql_stmt_execute(stmt);
            mysql_stmt_bind_result(stmt, &result);
            ok = mysql_stmt_fetch(stmt) == 0;
        }
        if (ok) {
            FCGX_FPrintF(req.out,
                         "Status: 200 OK\r\nContent-Type: application/json\r\n"
                         "Content-Length: %d\r\n\r\n",
                         (int)length);
            FCGX_PutStr(body, (int)length, req.out);
        } else {
            FCGX_PutS("Status: 500 Internal Server Error\r\n\r\n", req.out);
        }
        if (!from_memory)
            mysql_stmt_free_result(stmt);
        /* ONE_SELECT_PLAIN_CLOSE=1: close as purser does once the input is read (no lingering
         * close), to compare like with like. */
        if (plain_close && FCGX_GetChar(req.in) == EOF)
            FCGX_Detach(&req);
        FCGX_Finish_r(&req);
    }
    return 0;
}

int main(int argc, char **argv)
{
    int fd, workers;
    if (argc > 1 && strcmp(argv[1], "--memory") == 0) {
        from_memory = 1;
        argv++;
        argc--;
    }
    if (argc != 8) {
        fprintf(stderr, "usage: one-select [--memory] SOCKET DB_SOCKET USER PASSWORD_FILE "
                        "DATABASE ID WORKERS\n");
        return 2;
    }
    FCGX_Init();
    mysql_library_init(0, NULL, NULL);
    unlink(argv[1]);
    if ((fd = FCGX_OpenSocket(argv[1], 128)) < 0)
        return 1;
    workers = atoi(argv[7]);
    for (int i = 0; i < workers; i++)
        if (fork() == 0) {
            prctl(PR_SET_PDEATHSIG, SIGTERM); /* go when the bench stops the parent */
            return serve(fd, argv);
        }
    signal(SIGTERM, SIG_DFL);
    while (wait(NULL) > 0)
        ;
    return 0;
}
