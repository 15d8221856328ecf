// timerfd and eventfd, which Swift's Glibc module does not export. Seen by BackgrounderDaemon's
// wall-clock change monitor only.
#include <sys/eventfd.h>
#include <sys/timerfd.h>
