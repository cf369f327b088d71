#ifndef SNAPBACK_CLIBUV_SHIM_H
#define SNAPBACK_CLIBUV_SHIM_H
#include <uv.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#endif
