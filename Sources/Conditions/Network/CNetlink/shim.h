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
#include <netlink/route/tc.h>
#include <netlink/route/qdisc.h>
#include <netlink/route/class.h>
#include <netlink/route/qdisc/htb.h>
#include <linux/rtnetlink.h>
#include <linux/if_arp.h>
#include <linux/netlink.h>
#include <linux/filter.h>

/// IFF_LOWER_UP is missing from glibc's <net/if.h> (it lives in <linux/if.h>).
static const unsigned int cnl_IFF_LOWER_UP = 0x10000;

#endif
