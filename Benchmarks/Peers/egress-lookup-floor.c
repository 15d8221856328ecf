/* The least a watcher can do per default-route change when it must ask the kernel where traffic
 * leaves (what `status --watch` does after each relevant change): receive the IPv4 route
 * notification (routes to specific prefixes are skipped), send one RTM_GETROUTE lookup for
 * 8.8.8.8 (a lookup only: no packet is sent), receive the reply, print one line with the egress
 * interface index, flushed at once. No model, no JSON, no checks beyond the kernel's framing: a
 * floor to compare `status --watch` and `ip monitor` with, in the FIB-scale benchmark
 * (`ReachabilityBenchmark --scale N --floor PATH`).
 *
 * Build: cc -O2 -Wall -Werror -o egress-lookup-floor egress-lookup-floor.c
 */
#include <errno.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

struct lookup {
  struct nlmsghdr header;
  struct rtmsg route;
  struct rtattr destination;
  unsigned char address[4];
};

int main(void) {
  int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
  struct sockaddr_nl local = {.nl_family = AF_NETLINK, .nl_groups = RTMGRP_IPV4_ROUTE};
  if (fd < 0 || bind(fd, (struct sockaddr *)&local, sizeof local) < 0) {
    perror("netlink socket");
    return 1;
  }
  socklen_t length = sizeof local;
  if (getsockname(fd, (struct sockaddr *)&local, &length) < 0) {
    perror("getsockname");
    return 1;
  }
  static char buffer[65536];
  unsigned sequence = 0;
  for (;;) {
    ssize_t count = recv(fd, buffer, sizeof buffer, 0);
    if (count < 0 && errno == ENOBUFS) continue; /* notifications lost: nothing to redo here */
    if (count < 0) {
      perror("recv");
      return 1;
    }
    struct nlmsghdr *header = (struct nlmsghdr *)buffer;
    /* A reply to our own lookup that came late is not a change. */
    if (header->nlmsg_pid == local.nl_pid) continue;
    if (header->nlmsg_type != RTM_NEWROUTE && header->nlmsg_type != RTM_DELROUTE) continue;
    struct rtmsg *changed = NLMSG_DATA(header);
    if (changed->rtm_dst_len != 0) continue; /* like status --watch: default routes only */
    struct lookup request;
    memset(&request, 0, sizeof request);
    request.header.nlmsg_len = sizeof request;
    request.header.nlmsg_type = RTM_GETROUTE;
    request.header.nlmsg_flags = NLM_F_REQUEST;
    request.header.nlmsg_seq = ++sequence;
    request.route.rtm_family = AF_INET;
    request.route.rtm_dst_len = 32;
    request.destination.rta_len = RTA_LENGTH(4);
    request.destination.rta_type = RTA_DST;
    memcpy(request.address, (unsigned char[]){8, 8, 8, 8}, 4);
    if (send(fd, &request, sizeof request, 0) < 0) {
      perror("send");
      return 1;
    }
    do { /* notifications queued before the reply are skipped */
      count = recv(fd, buffer, sizeof buffer, 0);
    } while (count > 0 && NLMSG_OK(header, (unsigned)count) && header->nlmsg_seq != sequence);
    if (count < 0 || !NLMSG_OK(header, (unsigned)count)) continue;
    int egress = -1;
    if (header->nlmsg_type == RTM_NEWROUTE) {
      struct rtmsg *route = NLMSG_DATA(header);
      int length = header->nlmsg_len - NLMSG_LENGTH(sizeof *route);
      for (struct rtattr *attribute = RTM_RTA(route); RTA_OK(attribute, length);
           attribute = RTA_NEXT(attribute, length)) {
        if (attribute->rta_type == RTA_OIF) memcpy(&egress, RTA_DATA(attribute), sizeof egress);
      }
    }
    printf("egress %d\n", egress);
    fflush(stdout);
  }
}
