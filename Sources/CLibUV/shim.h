#ifndef SNAPBACK_CLIBUV_SHIM_H
#define SNAPBACK_CLIBUV_SHIM_H
#include <uv.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <malloc.h> /* malloc_trim, which the Glibc module leaves out */
#endif
