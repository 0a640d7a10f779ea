/* A feeder process and a reader process of N threads (default 4), one
 * pipe pair between the feeder and each reader: the feeder writes a byte
 * to every reader, then reads every reply. Each reader blocks on its pipe
 * and is woken by the feeder's write; the feeder blocks on the replies
 * and is woken by the readers. Both processes share the caller's process
 * group (kill the group to end them); the feeder also dies with the
 * reader process. Usage: pipe_fanout [N] */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#define MAX_READERS 16

static int req[MAX_READERS][2], rep[MAX_READERS][2];

static void *reader(void *arg)
{
    long i = (long)arg;
    char c;
    prctl(PR_SET_NAME, "pipe_reader");
    for (;;) {
        if (read(req[i][0], &c, 1) != 1 || write(rep[i][1], &c, 1) != 1)
            _exit(0);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 4;
    if (n < 1 || n > MAX_READERS)
        return 2;
    for (int i = 0; i < n; i++)
        if (pipe(req[i]) || pipe(rep[i]))
            return 2;
    pid_t feeder = fork();
    if (feeder < 0)
        return 2;
    if (feeder == 0) {
        char c = 'x';
        prctl(PR_SET_NAME, "pipe_feeder");
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        for (;;) {
            for (int i = 0; i < n; i++)
                if (write(req[i][1], &c, 1) != 1)
                    _exit(0);
            for (int i = 0; i < n; i++)
                if (read(rep[i][0], &c, 1) != 1)
                    _exit(0);
        }
    }
    pthread_t t;
    for (long i = 0; i < n; i++)
        if (pthread_create(&t, NULL, reader, (void *)i))
            return 2;
    waitpid(feeder, NULL, 0);
    return 0;
}
