/*
 * dualrev_mpi.h - data-parallel gradients across MPI processes: the optional
 * part of dualrev that needs MPI (make mpi).  It is not in libdualrev.a or
 * libdualrev.so: link cbits/mpi/allreduce.c (compiled with mpicc) beside the
 * library, or libdualrev_mpi.a, which make install puts beside it where
 * mpicc is found.
 *
 * Model
 * -----
 * Data parallelism splits a batch across processes ("ranks"): each rank holds
 * the same parameters, records the loss of its own shard on its own tape,
 * sweeps it, and reads its gradient into a vector laid out the same way on
 * every rank.  When the loss is a sum over samples (a mean is a sum scaled by
 * 1 / whole batch), the gradient of the whole batch is the sum of the shards'
 * gradients, so one sum across ranks gives every rank the gradient that one
 * process would have computed from the whole batch, up to the order of the
 * additions (rounding).  Every rank then takes the same step and the
 * parameters stay identical without being sent.
 *
 * examples/mpi_mlp.c trains a 784-300-100-10 network this way and checks the
 * summed gradient against one process's gradient of the whole batch.
 */
#ifndef DUALREV_MPI_H
#define DUALREV_MPI_H

#include <mpi.h>
#include <stddef.h>

#include "dualrev.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * Returned when an MPI call reported a failure.  Outside the range of
 * dr_status, so it is never confused with the library's own codes.  MPI
 * returns failures only when the communicator's error handler lets it
 * (MPI_ERRORS_RETURN or a handler of the caller's, which sees MPI's own
 * error code first); under MPI's default handler, MPI_ERRORS_ARE_FATAL, MPI
 * itself ends the job, as for any MPI call.
 */
#define DR_EMPI 100

/**
 * Sum g[0 .. n-1] across the ranks of comm, in place: afterwards every rank
 * holds the elementwise sum of all ranks' vectors (MPI_Allreduce with
 * MPI_IN_PLACE and MPI_SUM on doubles, so no second buffer of the gradient's
 * size is needed).
 *
 * A collective call: every rank of comm calls it with the same n, in the same
 * order relative to its other collective calls on comm.  Vectors longer than
 * an MPI count (int) are summed in pieces of at most INT_MAX elements.  The
 * MPI standard recommends, without promising it, that every rank get the
 * bit-identical sum; a program that relies on identical parameters should
 * compare them now and then (examples/mpi_mlp.c compares a hash of them).
 *
 * Returns DR_OK; DR_EINVAL before any communication for g NULL with n > 0,
 * comm MPI_COMM_NULL or an intercommunicator, or MPI not initialised (or
 * already finalised), so a rank that gets DR_EINVAL has not entered the
 * collective and the others wait for it (check arguments on every rank);
 * DR_EMPI if MPI reported a failure (g may then hold partial sums).  n == 0
 * is DR_OK with no communication.  Never aborts by itself.
 */
DR_API int dr_mpi_allreduce_sum(double *g, size_t n, MPI_Comm comm);

/** dr_strerror for the codes of dr_mpi_allreduce_sum (DR_EMPI included). */
DR_API const char *dr_mpi_strerror(int status);

#ifdef __cplusplus
}
#endif

#endif /* DUALREV_MPI_H */
