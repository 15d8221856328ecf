#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "CSystemShims.h"

#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <linux/filter.h>
#include <malloc.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <unistd.h>

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif

int csystem_set_child_subreaper(void) { return prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); }

int csystem_is_child_subreaper(void) {
  int flag = 0;
  if (prctl(PR_GET_CHILD_SUBREAPER, (unsigned long)&flag, 0, 0, 0) != 0) return -1;
  return flag != 0;
}

int csystem_setns_net(int fd) { return setns(fd, CLONE_NEWNET); }

int csystem_pidfd_open(pid_t pid) { return (int)syscall(SYS_pidfd_open, pid, 0); }

#ifndef SYS_pidfd_send_signal
#define SYS_pidfd_send_signal 424
#endif

int csystem_pidfd_send_signal(int pidfd, int signal) {
  return (int)syscall(SYS_pidfd_send_signal, pidfd, signal, NULL, 0);
}

static pid_t peek(idtype_t type, id_t id) {
  siginfo_t info = {0};
  if (waitid(type, id, &info, WEXITED | WNOHANG | WNOWAIT) == -1) return -1;
  return info.si_pid;
}

pid_t csystem_peek_exited_in_group(pid_t pgid) { return peek(P_PGID, (id_t)pgid); }

pid_t csystem_peek_exited(pid_t pid) { return peek(P_PID, (id_t)pid); }

int csystem_reap(pid_t pid) {
  siginfo_t info = {0};
  return waitid(P_PID, (id_t)pid, &info, WEXITED | WNOHANG);
}

long csystem_filesystem_type(int fd) {
  struct statfs info;
  return fstatfs(fd, &info) == -1 ? -1 : (long)info.f_type;
}

long csystem_getxattr(const char *path, const char *name, void *value, unsigned long size) {
  return (long)getxattr(path, name, value, (size_t)size);
}

int csystem_ioprio_set(pid_t pid, int ioClass, int level) {
  // IOPRIO_WHO_PROCESS = 1, IOPRIO_CLASS_SHIFT = 13 (linux/ioprio.h).
  return (int)syscall(SYS_ioprio_set, 1, (int)pid, (ioClass << 13) | level);
}

int csystem_ioprio_get(pid_t pid) { return (int)syscall(SYS_ioprio_get, 1, (int)pid); }

int csystem_release_free_heap(void) { return malloc_trim(0); }

int csystem_use_single_malloc_arena(void) { return mallopt(M_ARENA_MAX, 1); }

static int release_object_file_pages(struct dl_phdr_info *info, size_t size, void *data) {
  (void)size;
  // The vDSO is the kernel's own mapping, not a file.
  if (info->dlpi_name != NULL && strncmp(info->dlpi_name, "linux-vdso", 10) == 0) return 0;
  unsigned long page = (unsigned long)sysconf(_SC_PAGESIZE);
  unsigned long *advised = data;
  for (ElfW(Half) index = 0; index < info->dlpi_phnum; index++) {
    const ElfW(Phdr) *segment = &info->dlpi_phdr[index];
    if (segment->p_type != PT_LOAD || (segment->p_flags & PF_W) || segment->p_memsz == 0) {
      continue;
    }
    unsigned long start = (info->dlpi_addr + segment->p_vaddr) & ~(page - 1);
    unsigned long end =
        (info->dlpi_addr + segment->p_vaddr + segment->p_memsz + page - 1) & ~(page - 1);
    if (madvise((void *)start, end - start, MADV_DONTNEED) == 0) *advised += end - start;
  }
  return 0;
}

unsigned long csystem_release_file_pages(void) {
  unsigned long advised = 0;
  dl_iterate_phdr(release_object_file_pages, &advised);
  return advised;
}

int csystem_set_thread_name(const char *name) {
  char truncated[16];
  strncpy(truncated, name, sizeof truncated - 1);
  truncated[sizeof truncated - 1] = 0;
  return pthread_setname_np(pthread_self(), truncated);
}

int csystem_accept_nonblocking(int listener) {
  return accept4(listener, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
}

// The filter of csystem_attach_uevent_subsystem_filter for the NUL-terminated `key`
// (`SUBSYSTEM=<subsystem>\0`, `key_length` bytes with the NUL), scanning at most `scan`
// (<= CSYSTEM_UEVENT_FILTER_SCAN) header bytes.
static int attach_uevent_filter(int fd, const unsigned char *key, size_t key_length, int scan) {
  // 1 + 6 per scanned byte + 1 + 4 + 2 per key chunk (at most 2 per 4 bytes + 2) + 2.
  enum { capacity = 1 + 6 * CSYSTEM_UEVENT_FILTER_SCAN + 1 + 4 + 2 * 20 + 2 };
  _Static_assert(capacity <= BPF_MAXINSNS, "filter too long");
  struct sock_filter *program = calloc(capacity, sizeof *program);
  if (program == NULL) return -1;
  unsigned short count = 0;
  // X: the index of the byte being looked at.
  program[count++] = (struct sock_filter)BPF_STMT(BPF_LDX | BPF_W | BPF_IMM, 0);
  unsigned short jumps[CSYSTEM_UEVENT_FILTER_SCAN];
  for (int step = 0; step < scan; step++) {
    // A = byte[X]; NUL: jump to `found`; else X += 1. (Past the end: the kernel ends the
    // program with 0, dropping a datagram with no NUL at all.)
    program[count++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_B | BPF_IND, 0);
    program[count++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0, 0, 1);
    jumps[step] = count;
    program[count++] = (struct sock_filter)BPF_STMT(BPF_JMP | BPF_JA, 0);  // k set below
    program[count++] = (struct sock_filter)BPF_STMT(BPF_MISC | BPF_TXA, 0);
    program[count++] = (struct sock_filter)BPF_STMT(BPF_ALU | BPF_ADD | BPF_K, 1);
    program[count++] = (struct sock_filter)BPF_STMT(BPF_MISC | BPF_TAX, 0);
  }
  // The header is longer than the scan: let it through.
  program[count++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, 0xffffffffu);
  unsigned short found = count;
  for (int step = 0; step < scan; step++) {
    program[jumps[step]].k = (unsigned)(found - jumps[step] - 1);
  }
  // X = 2 * (X + 1) + 15: where SUBSYSTEM= starts.
  program[count++] = (struct sock_filter)BPF_STMT(BPF_MISC | BPF_TXA, 0);
  program[count++] = (struct sock_filter)BPF_STMT(BPF_ALU | BPF_ADD | BPF_X, 0);
  program[count++] = (struct sock_filter)BPF_STMT(BPF_ALU | BPF_ADD | BPF_K, 17);
  program[count++] = (struct sock_filter)BPF_STMT(BPF_MISC | BPF_TAX, 0);
  // Compare the key in big-endian words, then a half word and a byte; any mismatch: drop.
  unsigned short mismatches[24];
  int mismatch_count = 0;
  size_t offset = 0;
  while (offset < key_length) {
    size_t left = key_length - offset;
    unsigned size = left >= 4 ? BPF_W : left >= 2 ? BPF_H : BPF_B;
    size_t width = left >= 4 ? 4 : left >= 2 ? 2 : 1;
    unsigned value = 0;
    for (size_t index = 0; index < width; index++) value = (value << 8) | key[offset + index];
    program[count++] = (struct sock_filter)BPF_STMT(BPF_LD | size | BPF_IND, (unsigned)offset);
    mismatches[mismatch_count++] = count;
    program[count++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, value, 0, 0);
    offset += width;
  }
  program[count++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, 0xffffffffu);
  unsigned short drop = count;
  program[count++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, 0);
  for (int index = 0; index < mismatch_count; index++) {
    program[mismatches[index]].jf = (unsigned char)(drop - mismatches[index] - 1);
  }
  struct sock_fprog filter = {.len = count, .filter = program};
  int result = setsockopt(fd, SOL_SOCKET, SO_ATTACH_FILTER, &filter, sizeof filter);
  int saved = errno;
  free(program);
  errno = saved;
  return result;
}

int csystem_attach_uevent_subsystem_filter(int fd, const char *subsystem) {
  size_t name_length = subsystem == NULL ? 0 : strlen(subsystem);
  if (name_length == 0 || name_length > 48) {
    errno = EINVAL;
    return -1;
  }
  unsigned char key[64];
  memcpy(key, "SUBSYSTEM=", 10);
  memcpy(key + 10, subsystem, name_length);
  size_t key_length = 10 + name_length + 1;  // with its NUL
  key[key_length - 1] = 0;
  // The kernel charges a socket filter, as converted to eBPF, to the socket's option memory:
  // more than net.core.optmem_max is refused with ENOMEM. That limit was 20480 bytes before
  // Linux 6.9 (Debian 12's 6.1 kernel), too little for the full 640-byte scan (issue #34: the
  // daemon under Debian's kernel opened no uevent socket at all and saw no power change). A
  // shorter scan is tried then; a header longer than the scan is let through, for user space.
  static const int scans[] = {CSYSTEM_UEVENT_FILTER_SCAN, 192, 96, 48};
  int result = -1;
  for (size_t index = 0; index < sizeof scans / sizeof scans[0]; index++) {
    result = attach_uevent_filter(fd, key, key_length, scans[index]);
    if (result == 0 || errno != ENOMEM) break;
  }
  return result;
}

static int signal_pipe_read = -1;
static volatile int signal_pipe_write = -1;

static void csystem_write_signal(int signal) {
  int saved = errno;
  unsigned char byte = (unsigned char)signal;
  (void)write(signal_pipe_write, &byte, 1);
  errno = saved;
}

int csystem_forward_signals_to_pipe(const int *signals, int count) {
  int ends[2];
  if (pipe2(ends, O_CLOEXEC | O_NONBLOCK) != 0) {
    return -1;
  }
  signal_pipe_read = ends[0];
  signal_pipe_write = ends[1];
  struct sigaction action;
  memset(&action, 0, sizeof action);
  action.sa_handler = csystem_write_signal;
  sigfillset(&action.sa_mask);
  action.sa_flags = SA_RESTART;
  sigset_t inherited_blocks;
  sigemptyset(&inherited_blocks);
  for (int index = 0; index < count; index++) {
    if (sigaction(signals[index], &action, NULL) != 0) {
      return -1;
    }
    sigaddset(&inherited_blocks, signals[index]);
  }
  // A parent may have left them blocked (a test runner does): the handler must see them.
  if (pthread_sigmask(SIG_UNBLOCK, &inherited_blocks, NULL) != 0) {
    return -1;
  }
  return signal_pipe_read;
}

int csystem_signal_pipe(void) {
  return signal_pipe_read;
}

/// The main program's GNU build ID, from its PT_NOTE segments as loaded (no file read).
struct build_id_search {
  unsigned char *buffer;
  int capacity;
  int length;
};

static int find_program_build_id(struct dl_phdr_info *info, size_t size, void *data) {
  (void)size;
  struct build_id_search *search = data;
  for (int index = 0; index < info->dlpi_phnum; index++) {
    const ElfW(Phdr) *header = &info->dlpi_phdr[index];
    if (header->p_type != PT_NOTE) continue;
    const unsigned char *note = (const unsigned char *)(info->dlpi_addr + header->p_vaddr);
    const unsigned char *end = note + header->p_memsz;
    while (note + sizeof(ElfW(Nhdr)) <= end) {
      const ElfW(Nhdr) *entry = (const ElfW(Nhdr) *)note;
      const unsigned char *name = note + sizeof(ElfW(Nhdr));
      const unsigned char *desc = name + ((entry->n_namesz + 3) & ~3u);
      const unsigned char *next = desc + ((entry->n_descsz + 3) & ~3u);
      if (next > end) break;
      if (entry->n_type == NT_GNU_BUILD_ID && entry->n_namesz == 4 &&
          memcmp(name, "GNU", 4) == 0 && entry->n_descsz > 0 &&
          (int)entry->n_descsz <= search->capacity) {
        memcpy(search->buffer, desc, entry->n_descsz);
        search->length = (int)entry->n_descsz;
        return 1;
      }
      note = next;
    }
  }
  return 1;  // the first object is the main program: stop there
}

int csystem_program_build_id(unsigned char *buffer, int capacity) {
  struct build_id_search search = {buffer, capacity, 0};
  dl_iterate_phdr(find_program_build_id, &search);
  return search.length;
}

// MARK: - A run's process, started held at a gate

#ifndef CLONE_PIDFD
#define CLONE_PIDFD 0x00001000
#endif
#ifndef SYS_close_range
#define SYS_close_range 436
#endif

// The child shares the daemon's memory (CLONE_VM: no page tables copied, no copy-on-write
// faults in the daemon while the child waits at its gate) and runs on a stack of its own, but
// it also shares the thread-local storage of the thread that cloned it, which goes on running:
// the child must not touch `errno` or anything else of the C library's. So it makes raw system
// calls, which return -errno and set nothing. Where no raw call is written (another
// architecture), the child is a plain fork instead.
// The child's code is not instrumented by a sanitizer build: its runtime keeps per-thread state
// in the thread-local storage the child shares with a running thread of the daemon's.
#if defined(__has_attribute) && __has_attribute(disable_sanitizer_instrumentation)
#define CHILD_CODE __attribute__((disable_sanitizer_instrumentation, noinline))
#else
#define CHILD_CODE __attribute__((no_sanitize("address", "thread"), noinline))
#endif

#if defined(__has_feature)
#if __has_feature(thread_sanitizer) || __has_feature(address_sanitizer)
#define CSYSTEM_SANITIZED 1
#endif
#endif
#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
#define CSYSTEM_SANITIZED 1
#endif

// A sanitizer build forks instead (`CSYSTEM_SHARED_SPAWN` 0): ThreadSanitizer intercepts
// `clone` and runs its own code in the child, which then shared the runtime's locks with the
// daemon (a child spun for ever on one in CI's ThreadSanitizer step).
#if defined(CSYSTEM_SANITIZED)
#define CSYSTEM_SHARED_SPAWN 0
static long raw_syscall(long n, long a, long b, long c, long d) {
  long result = syscall(n, a, b, c, d);
  return result < 0 ? -errno : result;
}
#elif defined(__x86_64__)
#define CSYSTEM_SHARED_SPAWN 1
CHILD_CODE static long raw_syscall(long n, long a, long b, long c, long d) {
  long result;
  register long r10 __asm__("r10") = d;
  __asm__ volatile("syscall"
                   : "=a"(result)
                   : "a"(n), "D"(a), "S"(b), "d"(c), "r"(r10)
                   : "rcx", "r11", "memory");
  return result;
}
#elif defined(__aarch64__)
#define CSYSTEM_SHARED_SPAWN 1
CHILD_CODE static long raw_syscall(long n, long a, long b, long c, long d) {
  register long x8 __asm__("x8") = n;
  register long x0 __asm__("x0") = a;
  register long x1 __asm__("x1") = b;
  register long x2 __asm__("x2") = c;
  register long x3 __asm__("x3") = d;
  __asm__ volatile("svc 0" : "+r"(x0) : "r"(x8), "r"(x1), "r"(x2), "r"(x3) : "memory");
  return x0;
}
#else
#define CSYSTEM_SHARED_SPAWN 0
CHILD_CODE static long raw_syscall(long n, long a, long b, long c, long d) {
  long result = syscall(n, a, b, c, d);
  return result < 0 ? -errno : result;
}
#endif

/// The kernel's `struct sigaction` (not glibc's).
struct csystem_kernel_sigaction {
  void *handler;
  unsigned long flags;
  void *restorer;
  unsigned long mask;
};

struct csystem_spawn_child {
  const char *path;
  char *const *argv;
  char *const *envp;
  const char *cwd;
  int out_fd, err_fd, gate_fd, error_fd;
};

/// Writes the error `-result` to `fd` and ends the child without running anything.
CHILD_CODE static void child_fail(int fd, long result) {
  int error = (int)-result;
  while (raw_syscall(SYS_write, fd, (long)&error, sizeof error, 0) == -EINTR) {
  }
  raw_syscall(SYS_exit_group, 127, 0, 0, 0);
  __builtin_unreachable();
}

/// Closes every descriptor from `low` to `high`: `close_range`, or one `close` each (before
/// Linux 5.9).
CHILD_CODE static void child_close_range(int low, int high) {
  if (low > high) return;
  if (raw_syscall(SYS_close_range, low, high, 0, 0) == 0) return;
  for (long fd = low; fd <= high && fd < 65536; fd++) raw_syscall(SYS_close, fd, 0, 0, 0);
}

/// Makes `from` descriptor `to` (without close-on-exec).
CHILD_CODE static long child_move(int from, int to) {
  if (from == to) return raw_syscall(SYS_fcntl, to, F_SETFD, 0, 0);
  return raw_syscall(SYS_dup3, from, to, 0, 0);
}

CHILD_CODE static int child_start(void *argument) {
  const struct csystem_spawn_child *child = argument;
  long result;
  // Every signal back to its default (the daemon ignores SIGPIPE, for one; this child has its
  // own table: no CLONE_SIGHAND); the mask stays full until the exec.
  // Field by field: an initializer may become a call to memset, which a sanitizer intercepts.
  struct csystem_kernel_sigaction action;
  action.handler = SIG_DFL;
  action.flags = 0;
  action.restorer = NULL;
  action.mask = 0;
  for (long signal = 1; signal <= 64; signal++) {
    if (signal == SIGKILL || signal == SIGSTOP) continue;
    raw_syscall(SYS_rt_sigaction, signal, (long)&action, 0, 8);
  }
  if ((result = raw_syscall(SYS_setsid, 0, 0, 0, 0)) < 0) child_fail(child->error_fd, result);
  long null_fd = raw_syscall(SYS_openat, AT_FDCWD, (long)"/dev/null", O_RDONLY | O_CLOEXEC, 0);
  if (null_fd < 0) child_fail(child->error_fd, null_fd);
  // Out of the way of 0–2 first, so that no move below overwrites a descriptor still needed.
  long gate = raw_syscall(SYS_fcntl, child->gate_fd, F_DUPFD_CLOEXEC, 3, 0);
  if (gate < 0) child_fail(child->error_fd, gate);
  long error = raw_syscall(SYS_fcntl, child->error_fd, F_DUPFD_CLOEXEC, 3, 0);
  if (error < 0) child_fail(child->error_fd, error);
  if ((result = child_move((int)null_fd, 0)) < 0 || (result = child_move(child->out_fd, 1)) < 0 ||
      (result = child_move(child->err_fd, 2)) < 0) {
    child_fail((int)error, result);
  }
  // Nothing else of the daemon's is kept: above all no other run's gate, which would keep that
  // run from seeing the daemon's end.
  int low = gate < error ? (int)gate : (int)error, high = gate < error ? (int)error : (int)gate;
  child_close_range(3, low - 1);
  child_close_range(low + 1, high - 1);
  child_close_range(high + 1, 0x7fffffff);
  if (child->cwd != NULL && (result = raw_syscall(SYS_chdir, (long)child->cwd, 0, 0, 0)) < 0) {
    child_fail((int)error, result);
  }
  // Held until the daemon recorded the run, set its priority and moved it into its cgroups. A
  // gate closed without a byte is a daemon that ended first: nothing runs.
  char byte = 0;
  while ((result = raw_syscall(SYS_read, gate, (long)&byte, 1, 0)) == -EINTR) {
  }
  if (result != 1) raw_syscall(SYS_exit_group, 127, 0, 0, 0);
  raw_syscall(SYS_close, gate, 0, 0, 0);
  unsigned long none = 0;
  raw_syscall(SYS_rt_sigprocmask, SIG_SETMASK, (long)&none, 0, 8);
  result = raw_syscall(SYS_execve, (long)child->path, (long)child->argv, (long)child->envp, 0);
  child_fail((int)error, result);
  return 127;
}

/// The child's stack (it shares the daemon's memory, so it needs one of its own).
static const size_t child_stack_size = 64 * 1024;

/// Stacks of children that exec'd or ended, kept for the next spawns: a new mapping per run
/// cost an `mmap`, its first-touch page faults and an `munmap` whose TLB shootdown interrupts
/// every CPU the daemon's threads ran on (issue #35). At most `kept_stacks_limit` are kept
/// (runs at once are few); the rest are unmapped.
enum { kept_stacks_limit = 4 };
static void *kept_stacks[kept_stacks_limit];
static int kept_stacks_count = 0;
static pthread_mutex_t kept_stacks_lock = PTHREAD_MUTEX_INITIALIZER;

static void *child_stack_take(void) {
  void *stack = NULL;
  pthread_mutex_lock(&kept_stacks_lock);
  if (kept_stacks_count > 0) stack = kept_stacks[--kept_stacks_count];
  pthread_mutex_unlock(&kept_stacks_lock);
  if (stack != NULL) return stack;
  stack = mmap(
      NULL, child_stack_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1,
      0);
  return stack == MAP_FAILED ? NULL : stack;
}

static void child_stack_give_back(void *stack) {
  pthread_mutex_lock(&kept_stacks_lock);
  int kept = kept_stacks_count < kept_stacks_limit;
  if (kept) kept_stacks[kept_stacks_count++] = stack;
  pthread_mutex_unlock(&kept_stacks_lock);
  if (!kept) munmap(stack, child_stack_size);
}

pid_t csystem_spawn_gated(
    const char *path, char *const argv[], char *const envp[], const char *cwd, int *out_fd,
    int *err_fd, int *pidfd, int *gate_fd, int *error_fd, void **stack) {
  // [0] read, [1] write: the gate, the start error, stdout, stderr.
  int pipes[4][2];
  for (int index = 0; index < 4; index++) {
    if (pipe2(pipes[index], O_CLOEXEC) != 0) {
      int saved = errno;
      for (int made = 0; made < index; made++) {
        close(pipes[made][0]);
        close(pipes[made][1]);
      }
      errno = saved;
      return -1;
    }
  }
  int *gate = pipes[0], *error = pipes[1], *out = pipes[2], *err = pipes[3];
  void *memory = child_stack_take();
  if (memory == NULL) {
    int saved = errno;
    for (int index = 0; index < 4; index++) {
      close(pipes[index][0]);
      close(pipes[index][1]);
    }
    errno = saved;
    return -1;
  }
  // Lives on the child's stack: the caller's frame may be gone before the child reads it.
  struct csystem_spawn_child *child =
      (struct csystem_spawn_child *)((char *)memory + child_stack_size) - 1;
  *child = (struct csystem_spawn_child){
      path, argv, envp, cwd, out[1], err[1], gate[0], error[1]};
  void *top = (void *)((uintptr_t)child & ~(uintptr_t)15);
  // No signal handler of the daemon's may run in the child before it reset them.
  sigset_t all, previous;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &previous);
  int descriptor = -1;
  int flags = CLONE_PIDFD | SIGCHLD | (CSYSTEM_SHARED_SPAWN ? CLONE_VM : 0);
  pid_t pid = clone(child_start, top, flags, child, &descriptor);
  int saved = errno;
  pthread_sigmask(SIG_SETMASK, &previous, NULL);
  close(gate[0]);
  close(error[1]);
  close(out[1]);
  close(err[1]);
  if (pid < 0) {
    close(gate[1]);
    close(error[0]);
    close(out[0]);
    close(err[0]);
    child_stack_give_back(memory);
    errno = saved;
    return -1;
  }
  fcntl(out[0], F_SETFL, fcntl(out[0], F_GETFL) | O_NONBLOCK);
  fcntl(err[0], F_SETFL, fcntl(err[0], F_GETFL) | O_NONBLOCK);
  *pidfd = descriptor;
  *gate_fd = gate[1];
  *error_fd = error[0];
  *out_fd = out[0];
  *err_fd = err[0];
  *stack = memory;
  return pid;
}

void csystem_spawn_release_stack(void *stack) {
  if (stack != NULL) child_stack_give_back(stack);
}

// MARK: - Runs' bytes, counted in the kernel (cgroup_skb)

#include <linux/bpf.h>

static long bpf_call(int command, union bpf_attr *attributes) {
  return syscall(SYS_bpf, command, attributes, sizeof *attributes);
}

int csystem_run_bytes_map_create(unsigned int max_entries) {
  union bpf_attr attributes;
  memset(&attributes, 0, sizeof attributes);
  attributes.map_type = BPF_MAP_TYPE_HASH;
  attributes.key_size = sizeof(struct csystem_run_bytes_key);
  attributes.value_size = sizeof(uint64_t);
  // Runs at once × interfaces × 2 directions; entries are allocated as packets come
  // (BPF_F_NO_PREALLOC) and deleted when a run ends. On a full map the program's insert fails
  // and that packet's length goes to the UNCOUNTED key, inserted here so that it always exists.
  attributes.max_entries = max_entries;
  attributes.map_flags = BPF_F_NO_PREALLOC;
  strncpy(attributes.map_name, "bg_run_bytes", sizeof attributes.map_name - 1);
  int map = (int)bpf_call(BPF_MAP_CREATE, &attributes);
  if (map < 0) return -1;
  struct csystem_run_bytes_key key = {.cgroup = CSYSTEM_RUN_BYTES_UNCOUNTED};
  uint64_t zero = 0;
  memset(&attributes, 0, sizeof attributes);
  attributes.map_fd = (uint32_t)map;
  attributes.key = (uint64_t)(uintptr_t)&key;
  attributes.value = (uint64_t)(uintptr_t)&zero;
  attributes.flags = BPF_ANY;
  if (bpf_call(BPF_MAP_UPDATE_ELEM, &attributes) < 0) {
    int error = errno;
    close(map);
    errno = error;
    return -1;
  }
  return map;
}

#define INSN(c, d, s, o, i) \
  ((struct bpf_insn){.code = (c), .dst_reg = (d), .src_reg = (s), .off = (o), .imm = (i)})
#define MOV64_REG(d, s) INSN(BPF_ALU64 | BPF_MOV | BPF_X, d, s, 0, 0)
#define MOV64_IMM(d, i) INSN(BPF_ALU64 | BPF_MOV | BPF_K, d, 0, 0, i)
#define ADD64_IMM(d, i) INSN(BPF_ALU64 | BPF_ADD | BPF_K, d, 0, 0, i)
#define OR32_IMM(d, i) INSN(BPF_ALU | BPF_OR | BPF_K, d, 0, 0, i)
#define LDX_W(d, s, o) INSN(BPF_LDX | BPF_MEM | BPF_W, d, s, o, 0)
#define STX_W(d, s, o) INSN(BPF_STX | BPF_MEM | BPF_W, d, s, o, 0)
#define STX_DW(d, s, o) INSN(BPF_STX | BPF_MEM | BPF_DW, d, s, o, 0)
#define ATOMIC_ADD_DW(d, s, o) INSN(BPF_STX | BPF_ATOMIC | BPF_DW, d, s, o, BPF_ADD)
// A 64-bit load takes two instructions: the map's descriptor, then the upper half (0).
#define EMIT_LD_MAP_FD(d, fd)                                                       \
  do {                                                                             \
    program[n++] = INSN(BPF_LD | BPF_DW | BPF_IMM, d, BPF_PSEUDO_MAP_FD, 0, fd); \
    program[n++] = INSN(0, 0, 0, 0, 0);                                            \
  } while (0)
#define CALL(helper) INSN(BPF_JMP | BPF_CALL, 0, 0, 0, helper)
#define JEQ_IMM(d, i, o) INSN(BPF_JMP | BPF_JEQ | BPF_K, d, 0, o, i)
#define JA(o) INSN(BPF_JMP | BPF_JA, 0, 0, o, 0)
#define EXIT() INSN(BPF_JMP | BPF_EXIT, 0, 0, 0, 0)

// The key on the stack at fp-16 (cgroup at -16, interface at -8, padding at -4), the length at
// fp-24.
#define KEY_OFFSET (-16)
#define LENGTH_OFFSET (-24)

int csystem_run_bytes_program_load(int map_fd, int ingress) {
  struct bpf_insn program[64];
  int n = 0;
  // r6 = the packet, r7 = its length.
  program[n++] = MOV64_REG(BPF_REG_6, BPF_REG_1);
  program[n++] = LDX_W(BPF_REG_7, BPF_REG_6, offsetof(struct __sk_buff, len));
  // The key: the cgroup of the packet's socket (bpf_skb_cgroup_id(skb), r1 is the packet
  // still), its interface with the direction bit, padding 0.
  program[n++] = CALL(BPF_FUNC_skb_cgroup_id);
  program[n++] = STX_DW(BPF_REG_10, BPF_REG_0, KEY_OFFSET);
  if (ingress) {
    program[n++] = LDX_W(BPF_REG_2, BPF_REG_6, offsetof(struct __sk_buff, ingress_ifindex));
    program[n++] = OR32_IMM(BPF_REG_2, (int32_t)CSYSTEM_RUN_BYTES_INGRESS);
  } else {
    program[n++] = LDX_W(BPF_REG_2, BPF_REG_6, offsetof(struct __sk_buff, ifindex));
  }
  program[n++] = STX_W(BPF_REG_10, BPF_REG_2, KEY_OFFSET + 8);
  program[n++] = MOV64_IMM(BPF_REG_2, 0);
  program[n++] = STX_W(BPF_REG_10, BPF_REG_2, KEY_OFFSET + 12);
  program[n++] = STX_DW(BPF_REG_10, BPF_REG_7, LENGTH_OFFSET);
  // The key's counter, when there: add atomically and pass the packet.
  EMIT_LD_MAP_FD(BPF_REG_1, map_fd);
  program[n++] = MOV64_REG(BPF_REG_2, BPF_REG_10);
  program[n++] = ADD64_IMM(BPF_REG_2, KEY_OFFSET);
  program[n++] = CALL(BPF_FUNC_map_lookup_elem);
  program[n++] = JEQ_IMM(BPF_REG_0, 0, 2);
  program[n++] = ATOMIC_ADD_DW(BPF_REG_0, BPF_REG_7, 0);
  int to_pass_1 = n;
  program[n++] = JA(0);
  // Not there: insert it with this length (BPF_NOEXIST); when another CPU inserted it
  // meanwhile, look it up again and add.
  EMIT_LD_MAP_FD(BPF_REG_1, map_fd);
  program[n++] = MOV64_REG(BPF_REG_2, BPF_REG_10);
  program[n++] = ADD64_IMM(BPF_REG_2, KEY_OFFSET);
  program[n++] = MOV64_REG(BPF_REG_3, BPF_REG_10);
  program[n++] = ADD64_IMM(BPF_REG_3, LENGTH_OFFSET);
  program[n++] = MOV64_IMM(BPF_REG_4, BPF_NOEXIST);
  program[n++] = CALL(BPF_FUNC_map_update_elem);
  int to_pass_2 = n;
  program[n++] = JEQ_IMM(BPF_REG_0, 0, 0);
  EMIT_LD_MAP_FD(BPF_REG_1, map_fd);
  program[n++] = MOV64_REG(BPF_REG_2, BPF_REG_10);
  program[n++] = ADD64_IMM(BPF_REG_2, KEY_OFFSET);
  program[n++] = CALL(BPF_FUNC_map_lookup_elem);
  int to_uncounted = n;
  program[n++] = JEQ_IMM(BPF_REG_0, 0, 0);
  program[n++] = ATOMIC_ADD_DW(BPF_REG_0, BPF_REG_7, 0);
  int to_pass_3 = n;
  program[n++] = JA(0);
  // uncounted: not there and not insertable (the map is full): add the length to the
  // UNCOUNTED key ({all ones, 0, 0}), which the daemon reports.
  int uncounted = n;
  program[n++] = MOV64_IMM(BPF_REG_2, -1);
  program[n++] = STX_DW(BPF_REG_10, BPF_REG_2, KEY_OFFSET);
  program[n++] = MOV64_IMM(BPF_REG_2, 0);
  program[n++] = STX_DW(BPF_REG_10, BPF_REG_2, KEY_OFFSET + 8);
  EMIT_LD_MAP_FD(BPF_REG_1, map_fd);
  program[n++] = MOV64_REG(BPF_REG_2, BPF_REG_10);
  program[n++] = ADD64_IMM(BPF_REG_2, KEY_OFFSET);
  program[n++] = CALL(BPF_FUNC_map_lookup_elem);
  program[n++] = JEQ_IMM(BPF_REG_0, 0, 1);
  program[n++] = ATOMIC_ADD_DW(BPF_REG_0, BPF_REG_7, 0);
  // pass: return 1 (0 would drop the packet).
  int pass = n;
  program[n++] = MOV64_IMM(BPF_REG_0, 1);
  program[n++] = EXIT();
  program[to_pass_1].off = (int16_t)(pass - to_pass_1 - 1);
  program[to_pass_2].off = (int16_t)(pass - to_pass_2 - 1);
  program[to_pass_3].off = (int16_t)(pass - to_pass_3 - 1);
  program[to_uncounted].off = (int16_t)(uncounted - to_uncounted - 1);

  union bpf_attr attributes;
  memset(&attributes, 0, sizeof attributes);
  attributes.prog_type = BPF_PROG_TYPE_CGROUP_SKB;
  attributes.insns = (uint64_t)(uintptr_t)program;
  attributes.insn_cnt = (uint32_t)n;
  attributes.license = (uint64_t)(uintptr_t)"GPL";
  attributes.expected_attach_type = ingress ? BPF_CGROUP_INET_INGRESS : BPF_CGROUP_INET_EGRESS;
  strncpy(attributes.prog_name, ingress ? "bg_run_bytes_in" : "bg_run_bytes_out",
    sizeof attributes.prog_name - 1);
  return (int)bpf_call(BPF_PROG_LOAD, &attributes);
}

int csystem_run_priority_map_create(unsigned int max_entries) {
  union bpf_attr attributes;
  memset(&attributes, 0, sizeof attributes);
  attributes.map_type = BPF_MAP_TYPE_HASH;
  attributes.key_size = sizeof(uint64_t);
  attributes.value_size = sizeof(uint32_t);
  attributes.max_entries = max_entries;
  strncpy(attributes.map_name, "bg_run_priority", sizeof attributes.map_name - 1);
  return (int)bpf_call(BPF_MAP_CREATE, &attributes);
}

int csystem_run_priority_program_load(int map_fd) {
  struct bpf_insn program[16];
  int n = 0;
  // r6 = the packet; the key at fp-8: the cgroup of the packet's socket.
  program[n++] = MOV64_REG(BPF_REG_6, BPF_REG_1);
  program[n++] = CALL(BPF_FUNC_skb_cgroup_id);
  program[n++] = STX_DW(BPF_REG_10, BPF_REG_0, -8);
  EMIT_LD_MAP_FD(BPF_REG_1, map_fd);
  program[n++] = MOV64_REG(BPF_REG_2, BPF_REG_10);
  program[n++] = ADD64_IMM(BPF_REG_2, -8);
  program[n++] = CALL(BPF_FUNC_map_lookup_elem);
  // A capped run's cgroup: the packet's priority is its class id.
  program[n++] = JEQ_IMM(BPF_REG_0, 0, 2);
  program[n++] = LDX_W(BPF_REG_2, BPF_REG_0, 0);
  program[n++] = STX_W(BPF_REG_6, BPF_REG_2, offsetof(struct __sk_buff, priority));
  // pass: return 1.
  program[n++] = MOV64_IMM(BPF_REG_0, 1);
  program[n++] = EXIT();
  union bpf_attr attributes;
  memset(&attributes, 0, sizeof attributes);
  attributes.prog_type = BPF_PROG_TYPE_CGROUP_SKB;
  attributes.insns = (uint64_t)(uintptr_t)program;
  attributes.insn_cnt = (uint32_t)n;
  attributes.license = (uint64_t)(uintptr_t)"GPL";
  attributes.expected_attach_type = BPF_CGROUP_INET_EGRESS;
  strncpy(attributes.prog_name, "bg_run_priority", sizeof attributes.prog_name - 1);
  return (int)bpf_call(BPF_PROG_LOAD, &attributes);
}

int csystem_run_priority_set(int map_fd, unsigned long long cgroup, unsigned int priority) {
  union bpf_attr attributes;
  memset(&attributes, 0, sizeof attributes);
  attributes.map_fd = (uint32_t)map_fd;
  attributes.key = (uint64_t)(uintptr_t)&cgroup;
  attributes.value = (uint64_t)(uintptr_t)&priority;
  attributes.flags = BPF_ANY;
  return (int)bpf_call(BPF_MAP_UPDATE_ELEM, &attributes);
}

int csystem_run_priority_clear(int map_fd, unsigned long long cgroup) {
  union bpf_attr attributes;
  memset(&attributes, 0, sizeof attributes);
  attributes.map_fd = (uint32_t)map_fd;
  attributes.key = (uint64_t)(uintptr_t)&cgroup;
  return (int)bpf_call(BPF_MAP_DELETE_ELEM, &attributes);
}

int csystem_cgroup_program_link(int program_fd, int cgroup_fd, int ingress) {
  union bpf_attr attributes;
  memset(&attributes, 0, sizeof attributes);
  attributes.link_create.prog_fd = (uint32_t)program_fd;
  attributes.link_create.target_fd = (uint32_t)cgroup_fd;
  attributes.link_create.attach_type = ingress ? BPF_CGROUP_INET_INGRESS : BPF_CGROUP_INET_EGRESS;
  return (int)bpf_call(BPF_LINK_CREATE, &attributes);
}

int csystem_run_bytes_read(
  int map_fd, struct csystem_run_bytes_key *keys, unsigned long long *values, int capacity) {
  int count = 0;
  struct csystem_run_bytes_key key, next;
  int first = 1;
  while (count < capacity) {
    union bpf_attr attributes;
    memset(&attributes, 0, sizeof attributes);
    attributes.map_fd = (uint32_t)map_fd;
    attributes.key = first ? 0 : (uint64_t)(uintptr_t)&key;
    attributes.next_key = (uint64_t)(uintptr_t)&next;
    if (bpf_call(BPF_MAP_GET_NEXT_KEY, &attributes) < 0) {
      if (errno == ENOENT) break;  // the last key
      return -1;
    }
    first = 0;
    key = next;
    uint64_t value = 0;
    memset(&attributes, 0, sizeof attributes);
    attributes.map_fd = (uint32_t)map_fd;
    attributes.key = (uint64_t)(uintptr_t)&key;
    attributes.value = (uint64_t)(uintptr_t)&value;
    if (bpf_call(BPF_MAP_LOOKUP_ELEM, &attributes) < 0) {
      if (errno == ENOENT) continue;  // deleted meanwhile
      return -1;
    }
    keys[count] = key;
    values[count] = value;
    count++;
  }
  return count;
}

int csystem_run_bytes_delete(int map_fd, const struct csystem_run_bytes_key *key) {
  union bpf_attr attributes;
  memset(&attributes, 0, sizeof attributes);
  attributes.map_fd = (uint32_t)map_fd;
  attributes.key = (uint64_t)(uintptr_t)key;
  return (int)bpf_call(BPF_MAP_DELETE_ELEM, &attributes);
}
