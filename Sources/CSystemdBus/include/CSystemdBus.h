// libsystemd's sd-bus (D-Bus client), seen by the DBus module only, and sd-journal's
// sd_journal_sendv, seen by the daemon's journal log handler. Swift cannot call the variadic
// sd-bus functions, so the few calls needing them are wrapped here.
//
// libsystemd is not linked: `loader.c` defines each function the project calls and opens
// libsystemd.so.0 on the first call (see there why). Calling a function it does not define is a
// link error, not a silent fallback: add the function to the list in `loader.c`.
#ifndef C_SYSTEMD_BUS_SHIM_H
#define C_SYSTEMD_BUS_SHIM_H

#include <systemd/sd-bus.h>
#include <systemd/sd-journal.h>
#include <errno.h>
#include <time.h>
#include <poll.h>

/// Appends one string argument (sd_bus_message_append(m, "s", value)).
static inline int csd_append_string(sd_bus_message *message, const char *value) {
  return sd_bus_message_append_basic(message, 's', value);
}

/// The CLOCK_MONOTONIC time in microseconds, the clock of sd_bus_get_timeout().
static inline unsigned long long csd_monotonic_microseconds(void) {
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return (unsigned long long)now.tv_sec * 1000000ULL + (unsigned long long)now.tv_nsec / 1000ULL;
}

/// The name of a D-Bus error reply, or NULL.
static inline const char *csd_error_name(const sd_bus_error *error) { return error->name; }

/// The message of a D-Bus error reply, or NULL.
static inline const char *csd_error_message(const sd_bus_error *error) { return error->message; }

/// A zeroed sd_bus_error (SD_BUS_ERROR_NULL).
static inline sd_bus_error csd_error_null(void) {
  sd_bus_error error = SD_BUS_ERROR_NULL;
  return error;
}

/// Whether libsystemd.so.0 could be opened (it is opened by this call if not yet). When it could
/// not, every sd-bus and sd-journal function returns -ELIBACC (or NULL), and
/// `csd_library_error` says why.
int csd_library_loaded(void);

/// Why libsystemd.so.0 could not be opened (dlerror's text), or NULL when it was.
const char *csd_library_error(void);

#endif
