// Thin shim over libnl-3 / libnl-route-3: headers plus the few things Swift cannot import.
#ifndef C_NETLINK_SHIM_H
#define C_NETLINK_SHIM_H

#include <netlink/netlink.h>
#include <netlink/msg.h>
#include <netlink/socket.h>
#include <netlink/route/link.h>
#include <netlink/route/addr.h>
#include <netlink/route/route.h>
#include <netlink/route/nexthop.h>
#include <linux/rtnetlink.h>
#include <linux/if_arp.h>
#include <linux/netlink.h>
#include <linux/filter.h>

#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/sched.h>

/// Moves the calling thread into the network namespace behind `fd` (setns(fd, CLONE_NEWNET)).
/// glibc declares setns only under _GNU_SOURCE, which the Swift Glibc module does not set.
static inline int cnl_setns_net(int fd) {
  return (int)syscall(SYS_setns, fd, CLONE_NEWNET);
}

/// Names the calling thread (prctl(PR_SET_NAME), at most 15 bytes), as seen in
/// /proc/PID/task/TID/comm; prctl is variadic and pthread_setname_np needs _GNU_SOURCE.
static inline int cnl_set_thread_name(const char *name) {
  return (int)syscall(SYS_prctl, 15 /* PR_SET_NAME */, name, 0, 0, 0);
}

/// IFF_LOWER_UP is missing from glibc's <net/if.h> (it lives in <linux/if.h>).
static const unsigned int cnl_IFF_LOWER_UP = 0x10000;

#endif
