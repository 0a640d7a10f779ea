/* Holds N threads alive for the scale benchmark: A of them "active" (each
 * sleeps 10 ms at a time, so it switches 100 times a second), the rest
 * asleep on a futex-backed condition for the whole run. Small stacks so
 * 100,000 threads fit in memory. Prints "ready N" when all have started;
 * runs until killed.
 *
 *   holder THREADS ACTIVE
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t never = PTHREAD_COND_INITIALIZER;
static long started;

static void *sleeper(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&lock);
	started++;
	for (;;)
		pthread_cond_wait(&never, &lock);
	return NULL;
}

static void *active(void *arg)
{
	struct timespec ts = { 0, 10 * 1000 * 1000 };
	(void)arg;
	pthread_mutex_lock(&lock);
	started++;
	pthread_mutex_unlock(&lock);
	for (;;)
		nanosleep(&ts, NULL);
	return NULL;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 10000;
	long a = argc > 2 ? atol(argv[2]) : 0;
	pthread_attr_t attr;
	pthread_t t;

	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 64 * 1024);
	for (long i = 0; i < n; i++) {
		if (pthread_create(&t, &attr, i < a ? active : sleeper, NULL)) {
			fprintf(stderr, "holder: thread %ld of %ld: cannot create\n", i, n);
			return 1;
		}
	}
	for (;;) {
		pthread_mutex_lock(&lock);
		long s = started;
		pthread_mutex_unlock(&lock);
		if (s == n)
			break;
		usleep(10000);
	}
	printf("ready %ld\n", n);
	fflush(stdout);
	for (;;)
		pause();
}
