/*
 * watchdog.c - the stress test's last resort against a deadlock: a thread
 * outside the Haskell runtime that ends the process with a failure if the
 * run has not finished by a deadline.  A Haskell thread stuck in a C call
 * (an unsafe foreign call) keeps its capability, and then no garbage
 * collection, and so no other Haskell thread, can run: the test's own
 * timeouts would never fire.
 */
#include <pthread.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

static void *watch(void *arg)
{
    double s = *(double *)arg;
    struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
    while (nanosleep(&ts, &ts) != 0)
        ;
    fprintf(stderr, "FAIL: the stress run did not finish in %.0f s "
                    "(a deadlock, possibly in C)\n", s);
    _exit(2);
    return NULL;
}

/* arm the watchdog: the process ends with status 2 after s seconds */
int stress_watchdog(double s)
{
    static double secs;
    secs = s;
    pthread_t th;
    if (pthread_create(&th, NULL, watch, &secs) != 0)
        return -1;
    return pthread_detach(th);
}
