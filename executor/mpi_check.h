// TESSEL_MPI_CHECK(call): every MPI call goes through it. On failure it throws RuntimeError
// naming the call, the file and line, this process's world rank and MPI's error string.
#pragma once

#include <mpi.h>

namespace tessel::detail {
[[noreturn]] void throw_mpi_error(int code, const char* call, const char* file, int line);
}

#define TESSEL_MPI_CHECK(call)                                                   \
    do {                                                                         \
        const int tessel_mpi_rc_ = (call);                                       \
        if (tessel_mpi_rc_ != MPI_SUCCESS)                                       \
            ::tessel::detail::throw_mpi_error(tessel_mpi_rc_, #call, __FILE__, __LINE__); \
    } while (0)
