// libsystemd, opened on first use instead of linked.
//
// Why: a linked libsystemd.so.0 brings six more libraries (libcap, libgcrypt, libgpg-error,
// liblzma, libzstd, liblz4) that the dynamic loader maps and relocates at every start of every
// `backgrounder` process, including the one-shot commands that never call it (`calendar`,
// `--help`, `unit`, `trigger`). Measured: an empty C program 0.38 ms of CPU, linked with
// libsystemd 0.82 ms (`perf stat -r 400`, 2026-11-30; BENCHMARKS.md, "CLI"). The daemon and the
// commands that talk D-Bus or write to the journal open it on their first call, once.
//
// Each function the project calls is defined here with libsystemd's own prototype (from its
// headers) and forwards to the library's definition. The library is opened with RTLD_LOCAL by its
// soname, the name a linked binary's loader would look up. When it cannot be opened, or lacks a
// function, the call fails with -ELIBACC ("Can not access a needed shared library"), or returns
// NULL, and `csd_library_error` says why.
// (Swift calls sd_journal_sendv itself; C would get the macro that adds the caller's location.)
#define SD_JOURNAL_SUPPRESS_LOCATION
#include "CSystemdBus.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

// X(return type, name, parameters, arguments, result when the function is missing)
#define CSD_FUNCTIONS(X)                                                                          \
  X(int, sd_bus_add_match,                                                                        \
    (sd_bus * bus, sd_bus_slot * *slot, const char *match, sd_bus_message_handler_t callback,     \
     void *userdata),                                                                             \
    (bus, slot, match, callback, userdata), -ELIBACC)                                             \
  X(int, sd_bus_call,                                                                             \
    (sd_bus * bus, sd_bus_message * m, uint64_t usec, sd_bus_error * ret_error,                   \
     sd_bus_message * *reply),                                                                    \
    (bus, m, usec, ret_error, reply), -ELIBACC)                                                   \
  X(int, sd_bus_call_async,                                                                       \
    (sd_bus * bus, sd_bus_slot * *slot, sd_bus_message * m, sd_bus_message_handler_t callback,    \
     void *userdata, uint64_t usec),                                                              \
    (bus, slot, m, callback, userdata, usec), -ELIBACC)                                           \
  X(sd_bus *, sd_bus_flush_close_unref, (sd_bus * bus), (bus), NULL)                              \
  X(int, sd_bus_get_events, (sd_bus * bus), (bus), -ELIBACC)                                      \
  X(int, sd_bus_get_fd, (sd_bus * bus), (bus), -ELIBACC)                                          \
  X(int, sd_bus_get_timeout, (sd_bus * bus, uint64_t * timeout_usec), (bus, timeout_usec),        \
    -ELIBACC)                                                                                     \
  X(int, sd_bus_get_unique_name, (sd_bus * bus, const char **unique), (bus, unique), -ELIBACC)    \
  X(int, sd_bus_message_append_basic, (sd_bus_message * m, char type, const void *p),             \
    (m, type, p), -ELIBACC)                                                                       \
  X(int, sd_bus_message_close_container, (sd_bus_message * m), (m), -ELIBACC)                     \
  X(int, sd_bus_message_enter_container,                                                          \
    (sd_bus_message * m, char type, const char *contents), (m, type, contents), -ELIBACC)         \
  X(int, sd_bus_message_exit_container, (sd_bus_message * m), (m), -ELIBACC)                      \
  X(const char *, sd_bus_message_get_destination, (sd_bus_message * m), (m), NULL)                \
  X(const sd_bus_error *, sd_bus_message_get_error, (sd_bus_message * m), (m), NULL)              \
  X(const char *, sd_bus_message_get_member, (sd_bus_message * m), (m), NULL)                     \
  X(const char *, sd_bus_message_get_path, (sd_bus_message * m), (m), NULL)                       \
  X(const char *, sd_bus_message_get_sender, (sd_bus_message * m), (m), NULL)                     \
  X(int, sd_bus_message_new_method_call,                                                          \
    (sd_bus * bus, sd_bus_message * *m, const char *destination, const char *path,                \
     const char *interface, const char *member),                                                  \
    (bus, m, destination, path, interface, member), -ELIBACC)                                     \
  X(int, sd_bus_message_open_container,                                                           \
    (sd_bus_message * m, char type, const char *contents), (m, type, contents), -ELIBACC)         \
  X(int, sd_bus_message_peek_type, (sd_bus_message * m, char *type, const char **contents),       \
    (m, type, contents), -ELIBACC)                                                                \
  X(int, sd_bus_message_read_basic, (sd_bus_message * m, char type, void *p), (m, type, p),       \
    -ELIBACC)                                                                                     \
  X(int, sd_bus_message_rewind, (sd_bus_message * m, int complete), (m, complete), -ELIBACC)      \
  X(int, sd_bus_message_set_auto_start, (sd_bus_message * m, int b), (m, b), -ELIBACC)            \
  X(int, sd_bus_message_skip, (sd_bus_message * m, const char *types), (m, types), -ELIBACC)      \
  X(sd_bus_message *, sd_bus_message_unref, (sd_bus_message * m), (m), NULL)                      \
  X(int, sd_bus_new, (sd_bus * *ret), (ret), -ELIBACC)                                            \
  X(int, sd_bus_open_system, (sd_bus * *ret), (ret), -ELIBACC)                                    \
  X(int, sd_bus_open_user, (sd_bus * *ret), (ret), -ELIBACC)                                      \
  X(int, sd_bus_process, (sd_bus * bus, sd_bus_message * *r), (bus, r), -ELIBACC)                 \
  X(int, sd_bus_set_address, (sd_bus * bus, const char *address), (bus, address), -ELIBACC)       \
  X(int, sd_bus_set_bus_client, (sd_bus * bus, int b), (bus, b), -ELIBACC)                        \
  X(sd_bus_slot *, sd_bus_slot_unref, (sd_bus_slot * slot), (slot), NULL)                         \
  X(int, sd_bus_start, (sd_bus * bus), (bus), -ELIBACC)                                           \
  X(sd_bus *, sd_bus_unref, (sd_bus * bus), (bus), NULL)                                          \
  X(int, sd_bus_wait, (sd_bus * bus, uint64_t timeout_usec), (bus, timeout_usec), -ELIBACC)       \
  X(int, sd_journal_sendv, (const struct iovec *iov, int n), (iov, n), -ELIBACC)

static struct {
#define CSD_FIELD(type, name, parameters, arguments, missing) type(*name) parameters;
  CSD_FUNCTIONS(CSD_FIELD)
#undef CSD_FIELD
  void (*sd_bus_error_free)(sd_bus_error *e);
} functions;

static pthread_once_t opened = PTHREAD_ONCE_INIT;
static char open_error[256];

static void csd_open(void) {
  void *library = dlopen("libsystemd.so.0", RTLD_NOW | RTLD_LOCAL);
  if (library == NULL) {
    const char *reason = dlerror();
    snprintf(open_error, sizeof open_error, "%s", reason ? reason : "libsystemd.so.0: not found");
    return;
  }
#define CSD_RESOLVE(type, name, parameters, arguments, missing)                                   \
  functions.name = (type(*) parameters)dlsym(library, #name);
  CSD_FUNCTIONS(CSD_RESOLVE)
#undef CSD_RESOLVE
  functions.sd_bus_error_free = (void (*)(sd_bus_error *))dlsym(library, "sd_bus_error_free");
}

int csd_library_loaded(void) {
  pthread_once(&opened, csd_open);
  return open_error[0] == '\0';
}

const char *csd_library_error(void) {
  pthread_once(&opened, csd_open);
  return open_error[0] == '\0' ? NULL : open_error;
}

#define CSD_DEFINE(type, name, parameters, arguments, missing)                                    \
  type name parameters {                                                                          \
    pthread_once(&opened, csd_open);                                                              \
    return functions.name ? functions.name arguments : missing;                                   \
  }
CSD_FUNCTIONS(CSD_DEFINE)
#undef CSD_DEFINE

// (An error can only have been set by libsystemd, so with no library there is nothing to free.)
void sd_bus_error_free(sd_bus_error *e) {
  pthread_once(&opened, csd_open);
  if (functions.sd_bus_error_free) functions.sd_bus_error_free(e);
}
