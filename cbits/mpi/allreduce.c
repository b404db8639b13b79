/*
 * allreduce.c - the sum of a gradient across MPI ranks
 * (include/dualrev_mpi.h).  The optional layer: compiled with mpicc by
 * make mpi, never into the library, and it uses only the public API.
 *
 * MPI counts are ints, so a vector is summed in pieces of DR_MPI_MAX_COUNT
 * elements (INT_MAX; make test-mpi also builds it with a small one, so that
 * the loop over pieces runs).  Arguments are checked before any
 * communication: an invalid call on one rank must not leave the others in a
 * half-finished collective that it never joins, and MPI's reaction to a
 * null or wrong communicator would be its error handler, by default the end
 * of the job.
 */
#include "dualrev_mpi.h"

#include <limits.h>

#ifndef DR_MPI_MAX_COUNT
#define DR_MPI_MAX_COUNT INT_MAX
#endif

int dr_mpi_allreduce_sum(double *g, size_t n, MPI_Comm comm)
{
    if ((n && !g) || comm == MPI_COMM_NULL)
        return DR_EINVAL;
    int up = 0, down = 0;
    if (MPI_Initialized(&up) != MPI_SUCCESS || !up ||
        MPI_Finalized(&down) != MPI_SUCCESS || down)
        return DR_EINVAL;
    int inter = 0;
    if (MPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS)
        return DR_EMPI;
    if (inter) /* MPI_IN_PLACE is not defined on an intercommunicator */
        return DR_EINVAL;
    while (n) {
        int c = n > (size_t)DR_MPI_MAX_COUNT ? DR_MPI_MAX_COUNT : (int)n;
        if (MPI_Allreduce(MPI_IN_PLACE, g, c, MPI_DOUBLE, MPI_SUM, comm) !=
            MPI_SUCCESS)
            return DR_EMPI;
        g += c;
        n -= (size_t)c;
    }
    return DR_OK;
}

const char *dr_mpi_strerror(int status)
{
    if (status == DR_EMPI)
        return "an MPI call failed (the communicator's error handler "
               "returned its error code)";
    return dr_strerror((dr_status)status);
}
