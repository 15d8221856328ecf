// libnl-genl-3 (generic netlink: family and multicast-group resolution for nl80211), seen by
// the Nl80211 module only.
#ifndef C_GENERIC_NETLINK_SHIM_H
#define C_GENERIC_NETLINK_SHIM_H

#include <netlink/netlink.h>
#include <netlink/socket.h>
#include <netlink/genl/genl.h>
#include <netlink/genl/ctrl.h>
#include <linux/nl80211.h>

#endif
