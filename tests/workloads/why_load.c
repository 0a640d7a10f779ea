/* Workloads whose scheduling trouble is known, for tests/live/why_live.rs.
 *   why_load spin N CPU NICE   N threads spinning; CPU >= 0 pins them all
 *                              there, -2 pins thread i to CPU i, -1 leaves
 *                              them free; each sets its own nice
 *   why_load mutex N           N threads taking one mutex in a loop (a
 *                              short critical section): futex contention
 *   why_load sleep N           N threads sleeping 10 ms in a loop (idle)
 * Runs until killed. */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static int cpu_arg, nice_arg;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static volatile unsigned long shared;

static void place(long i)
{
    int cpu = cpu_arg == -2 ? (int)i : cpu_arg;
    if (cpu >= 0) {
        cpu_set_t set;
        CPU_ZERO(&set);
        CPU_SET(cpu, &set);
        sched_setaffinity(0, sizeof set, &set);
    }
    setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), nice_arg);
}

static void *spin(void *arg)
{
    place((long)arg);
    for (;;)
        __asm__ volatile("" ::: "memory");
    return NULL;
}

static void *contend(void *arg)
{
    (void)arg;
    for (;;) {
        pthread_mutex_lock(&lock);
        for (int k = 0; k < 2000; k++)
            shared++;
        pthread_mutex_unlock(&lock);
    }
    return NULL;
}

static void *nap(void *arg)
{
    (void)arg;
    struct timespec ts = {0, 10 * 1000 * 1000};
    for (;;)
        nanosleep(&ts, NULL);
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc < 3)
        return 2;
    long n = atol(argv[2]);
    cpu_arg = argc > 3 ? atoi(argv[3]) : -1;
    nice_arg = argc > 4 ? atoi(argv[4]) : 0;
    void *(*body)(void *) = !strcmp(argv[1], "spin")    ? spin
                            : !strcmp(argv[1], "mutex") ? contend
                            : !strcmp(argv[1], "sleep") ? nap
                                                        : NULL;
    if (!body || n < 1 || n > 1024)
        return 2;
    pthread_t t;
    for (long i = 0; i < n; i++)
        if (pthread_create(&t, NULL, body, (void *)i))
            return 1;
    for (;;)
        pause();
}
