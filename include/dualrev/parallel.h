/*
 * dualrev/parallel.h - fork-join parallelism: child jobs that record at
 * the same time on other threads and a reverse pass that sweeps sibling
 * jobs in parallel.
 */
#ifndef DUALREV_PARALLEL_H
#define DUALREV_PARALLEL_H

#include "core.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------- fork-join parallelism
 * (thesis section 3.10.)  A computation can fork into child jobs that record
 * at the same time from other threads, each on its own segment of the tape,
 * and join back; the reverse pass then runs sibling jobs concurrently on a
 * pool of worker threads ("forks in the primal become joins in the dual").
 *
 * Handles.  The dr_tape* of dr_tape_new is the root handle.  dr_fork(t, n,
 * kids) gives n child handles, one per child job; each records like a tape
 * (every dr_* recording function, dr_recordn, array operations, and dr_fork /
 * dr_join / dr_fork_run on itself for nested forks, to any depth).  While
 * forked, t records nothing: recording on it returns constants and sets its
 * sticky status to DR_EBUSY; dr_seed, dr_reverse, dr_gradient, dr_jacobian,
 * dr_adjoints_clear, dr_tape_clear and dr_set_threads return DR_EBUSY.
 * dr_join(t) ends the fork: t continues in a new job that follows all the
 * children.  Child handles are valid from dr_fork to that dr_join; afterwards
 * they are recycled by later forks (recording on a joined handle records
 * nothing and sets that handle's status to DR_EINVAL until it is reused).
 * Seeding, sweeping, reading adjoints and clearing take the root handle only
 * (DR_EINVAL on a child handle); dr_tape_free on a child handle does nothing.
 *
 * Ids.  Ids of all jobs come from one counter (each job reserves ranges of
 * ids for its chunks), so they never collide and stay valid across segments.
 * An id may be used as an argument in the job that recorded it, in every job
 * forked from that job afterwards (and their descendants), and, after the
 * join, in the parent's continuation and everything after it.  Using an id
 * of a sibling job (one running at the same time) is a usage error that is
 * not always detected: an id that is beyond what the handle's job could have
 * seen is rejected with DR_EINVAL, but an id a sibling reserved earlier is
 * accepted (so is an id in a range a job reserved for its chunks but no
 * node took: its adjoint reads 0).  It stays memory-safe (the adjoint
 * array covers every reserved id) but the gradient is meaningless and the
 * sweep may race on that adjoint.
 *
 * Threads.  Each handle is used by one thread at a time (any thread; calls
 * on one handle need a happens-before order, as given by a mutex, a thread
 * join, or a Haskell MVar).  Different handles of one tape may record at the
 * same time on different threads.  Call dr_join(t) only after every call on
 * the child handles has returned and is ordered before it (e.g. after
 * pthread_join); children that forked must have joined (else DR_EBUSY).
 *
 * Errors.  A failure in a child (out of memory, an invalid id) sets the child
 * handle's sticky status (dr_tape_status on the child); dr_join copies the
 * first failure, in child order, into the parent's sticky status, so after
 * the last join the root reports it like any other recording failure.
 *
 * Replay.  A tape recorded at order 2 (the children take the order of the
 * handle that forked them) replays after its last join: dr_replay
 * evaluates the job graph again at new inputs, the children of each fork
 * at once on the worker pool with more than one thread (see "replay").
 *
 * Reverse pass.  dr_reverse (and dr_gradient, dr_jacobian) on the root sweeps
 * the job graph backwards: the continuation, then the children of each fork,
 * then the job that forked.  With dr_set_threads(t, 1) (the default) every
 * job runs on the calling thread, children last-to-first: the result is
 * bit-identical to the sequential recording of the same program (children
 * in order 0..n-1), and deterministic.  With more threads, sibling jobs run
 * at once on the tape's worker pool.  What a job adds into the adjoint of a
 * node recorded before its fork is noted in a log of the job's, and the job
 * that forked adds its children's logs in once they are all done, in the
 * order the sequential sweep makes those additions: the adjoints are
 * bit-identical to one thread's, at any thread count.  One exception
 * agrees to rounding only: sibling jobs that take an array recorded before
 * their fork sum into its adjoint per thread (see "Fork-join" under
 * arrays), and so into whatever that adjoint flows to.  A sweep that runs
 * out of memory for a log or a buffer fails with DR_ENOMEM (the tape's
 * sticky status; dr_tape_clear makes it usable again).  Each job's own
 * nodes are swept by one thread, in order.
 * The pool is created on first use (threads - 1 workers; the calling thread
 * works too), reused by later sweeps and dr_fork_run calls, and stopped by
 * dr_tape_free or a dr_set_threads with another count.  If a thread cannot
 * be created, the work runs with fewer (or on the calling thread).
 *
 * One thread budget.  OpenBLAS has a thread pool of its own.  While jobs
 * may run at once - from dr_fork to its dr_join, during dr_fork_run on the
 * worker pool, and during a parallel sweep - the library sets OpenBLAS to
 * one thread, so each job's array products run on the job's own thread and
 * the jobs are the parallelism (several jobs each asking OpenBLAS for every
 * core would oversubscribe them, and OpenBLAS serialises concurrent
 * callers).  Outside those times OpenBLAS uses its own thread count
 * (OPENBLAS_NUM_THREADS or openblas_set_num_threads).  OpenBLAS's count is
 * one process-wide setting: the first such hold, of any tape, saves it and
 * the last restores it, so a BLAS call made meanwhile by other code of the
 * process also runs single-threaded.  Linked against another CBLAS, the
 * library leaves threads alone.
 */

/**
 * Fork the current job of handle t (the root or a child handle) into n >= 1
 * child jobs and store their handles in children[0..n-1], each at t's order
 * (dr_tape_order).  DR_EINVAL if n is
 * 0, children is NULL or t is a joined handle; DR_EBUSY if t is already
 * forked; DR_ENOMEM if memory runs out (then nothing is forked and t records
 * on as before: the caller may run the children's work on t in order; the
 * sticky status says DR_ENOMEM, as for any failed allocation).
 */
DR_API dr_status dr_fork(dr_tape *t, size_t n, dr_tape **children);

/**
 * Join the children of t's open fork: their jobs become part of t's job
 * graph, their node counts and failures are added to t (and, where t is of
 * order 2, what they recorded for second order and replay), their handles
 * become invalid, and t records on in a new job.  DR_EINVAL if t has no open fork;
 * DR_EBUSY if a child has an open fork of its own (nothing changes).
 */
DR_API dr_status dr_join(dr_tape *t);

/** The function that dr_fork_run runs for child i on its handle. */
typedef void (*dr_job_fn)(dr_tape *child, size_t i, void *ctx);

/**
 * Fork t into n children, run fn(child_i, i, ctx) for every i, and join:
 * with threads > 1 on the tape's worker pool (the calling thread takes part;
 * fn runs on any of the threads, several at once), else in order i = 0..n-1
 * on the calling thread.  fn may fork its child again (nested dr_fork_run
 * calls share the pool and never deadlock) but must join what it forks and
 * end the recorders it begins.  A job that returns with a fork or a
 * recorder still open on its handle is a usage error that loses nothing
 * but that recording: dr_fork_run closes what was left open (the nodes of
 * such a recorder since it last took the cursor are dropped), joins, sets
 * t's sticky status and returns DR_EBUSY; dr_tape_clear makes the tape
 * usable again.  Otherwise returns the status of dr_fork (then fn never
 * ran) or dr_join.
 */
DR_API dr_status dr_fork_run(dr_tape *t, size_t n, dr_job_fn fn, void *ctx);

/**
 * Number of threads for the parallel work of the tape (root handle): the
 * reverse pass over forked jobs and dr_fork_run.  1 (the default) runs
 * everything on the calling thread; 0 means the number of online CPUs.
 * Not while forked (DR_EBUSY) or on a child handle (DR_EINVAL).
 */
DR_API dr_status dr_set_threads(dr_tape *t, unsigned n);
/** The tape's thread count (any handle); 0 for NULL. */
DR_API unsigned dr_get_threads(const dr_tape *t);

#ifdef __cplusplus
}
#endif

#endif /* DUALREV_PARALLEL_H */
