#ifndef C_SYSTEM_SHIMS_H
#define C_SYSTEM_SHIMS_H

#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/timerfd.h>
#include <sys/types.h>


/// Makes the calling process a child subreaper (`prctl(PR_SET_CHILD_SUBREAPER, 1)`): orphaned
/// descendants are reparented to it instead of PID 1. Returns 0, or -1 with errno set.
int csystem_set_child_subreaper(void);

/// 1 when the calling process is a child subreaper (`prctl(PR_GET_CHILD_SUBREAPER)`), 0 when it
/// is not, -1 with errno.
int csystem_is_child_subreaper(void);

/// The running program's GNU build ID (`NT_GNU_BUILD_ID`, read from its loaded note segments:
/// no file is opened), copied into `buffer` (at most `capacity` bytes). Returns its length, 0
/// when the program has none (linked without `--build-id`) or it does not fit.
int csystem_program_build_id(unsigned char *buffer, int capacity);

/// Moves the calling thread into the network namespace behind `fd` (`setns(fd, CLONE_NEWNET)`;
/// glibc declares setns only under _GNU_SOURCE). Returns 0, or -1 with errno.
int csystem_setns_net(int fd);

/// `pidfd_open(pid, 0)`: a descriptor that becomes readable when `pid` exits. -1 with errno.
int csystem_pidfd_open(pid_t pid);

/// `pidfd_send_signal(pidfd, signal, NULL, 0)`. Returns 0, or -1 with errno.
int csystem_pidfd_send_signal(int pidfd, int signal);

/// The pid of an exited (zombie) child in process group `pgid`, without reaping it
/// (`waitid(P_PGID, …, WEXITED | WNOHANG | WNOWAIT)`, one call: `systemCall` retries an
/// interrupted one); 0 when none has exited, -1 with errno (ECHILD: no child in that group).
pid_t csystem_peek_exited_in_group(pid_t pgid);

/// The pid of `pid` if it is an exited (zombie) child, without reaping it; 0 when it is still
/// running, -1 with errno (ECHILD: not a child).
pid_t csystem_peek_exited(pid_t pid);

/// Reaps the exited child `pid` (`waitid(P_PID, …, WEXITED | WNOHANG)`, one call). Returns 0,
/// or -1 with errno.
int csystem_reap(pid_t pid);

/// The file system type (`f_type` of `fstatfs(fd)`, e.g. `CGROUP2_SUPER_MAGIC`) of the file
/// `fd` names (an `O_PATH` descriptor works; one call); -1 with errno.
long csystem_filesystem_type(int fd);

/// `getxattr(path, name, value, size)` (sys/xattr.h is not in the Glibc module).
long csystem_getxattr(const char *path, const char *name, void *value, unsigned long size);

/// `ioprio_set(IOPRIO_WHO_PROCESS, pid, IOPRIO_PRIO_VALUE(ioClass, level))`: the I/O
/// scheduling class (1 realtime, 2 best-effort, 3 idle) and level (0–7) of `pid` (0: the
/// caller). Returns 0, or -1 with errno.
int csystem_ioprio_set(pid_t pid, int ioClass, int level);

/// `ioprio_get(IOPRIO_WHO_PROCESS, pid)`: the class in bits 13 and up, the level below; -1 with
/// errno.
int csystem_ioprio_get(pid_t pid);

/// Gives the heap's free memory back to the kernel (`malloc_trim(0)`). Returns 1 when some
/// memory was released.
int csystem_release_free_heap(void);

/// Makes every thread allocate from malloc's main arena (`mallopt(M_ARENA_MAX, 1)`). Call it
/// before the process starts its second thread: threads already attached to an arena keep it.
/// Returns 1 on success.
int csystem_use_single_malloc_arena(void);

/// Unmaps from this process the pages of every loaded object's read-only and code segments
/// (`PT_LOAD` segments without write permission, found with `dl_iterate_phdr`) with
/// `madvise(MADV_DONTNEED)`. They are clean copies of the files: the page cache keeps them and
/// a later access maps them again. Segments that were ever writable (data, RELRO) are left
/// alone. Returns the number of bytes of address space advised.
unsigned long csystem_release_file_pages(void);

/// Starts `path` with `argv` and `envp` (each NULL-terminated) as a new process, held before
/// its `execve` until the caller writes one byte to `*gate_fd`: time to record it, set its
/// priority and move it into its cgroups (no instant of the command runs before). The child
/// gets a session of its own (`setsid`), stdin `/dev/null`, stdout and stderr pipes whose read
/// ends are `*out_fd` and `*err_fd` (non-blocking), every signal at its default and none
/// blocked, no other descriptor of the caller's, and `cwd` (NULL: the caller's). A gate closed
/// without a byte (the caller ended) ends it with status 127 before anything ran. When a step
/// or the exec fails, its errno is written to `*error_fd` (end of file there once the exec
/// succeeded) and it ends with status 127.
///
/// Made by `clone(CLONE_VM | CLONE_PIDFD)` on x86-64 and arm64: the child shares the caller's
/// memory until its exec (no page tables copied, no copy-on-write faults while it waits) on a
/// stack of its own (`*stack`), making raw system calls only. So `path`, `argv`, `envp`, `cwd`
/// and `*stack` must stay valid until the child exec'd or ended: free them, the stack with
/// ``csystem_spawn_release_stack``, once it was reaped. Elsewhere a plain fork. Returns the pid
/// with `*pidfd`, `*gate_fd`, `*error_fd`, `*out_fd` and `*err_fd` (close-on-exec; the caller
/// closes them), or -1 with errno.
pid_t csystem_spawn_gated(
    const char *path, char *const argv[], char *const envp[], const char *cwd, int *out_fd,
    int *err_fd, int *pidfd, int *gate_fd, int *error_fd, void **stack);

/// Gives back the stack of a child of ``csystem_spawn_gated`` once it was reaped: kept for the
/// next spawns (up to four), unmapped beyond.
void csystem_spawn_release_stack(void *stack);

/// Names the calling thread (`pthread_setname_np`; at most 15 bytes are kept). Returns 0 or an
/// error number.
int csystem_set_thread_name(const char *name);

/// `accept4(listener, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC)`: -1 with errno.
int csystem_accept_nonblocking(int listener);

/// Attaches to `fd`, a `NETLINK_KOBJECT_UEVENT` socket, a classic BPF socket filter
/// (`SO_ATTACH_FILTER`) that lets through only kernel uevents whose `SUBSYSTEM` is `subsystem`:
/// everything else is dropped in the kernel, so the socket never wakes for it. The kernel writes
/// `ACTION@DEVPATH\0ACTION=…\0DEVPATH=…\0SUBSYSTEM=…\0…` (lib/kobject_uevent.c: the header,
/// then the three default keys in that order), so with H the header's length including its NUL,
/// `SUBSYSTEM=` starts at 2H + 15; the program finds the header's NUL (scanning at most
/// `CSYSTEM_UEVENT_FILTER_SCAN` bytes; a longer header is let through, for user space to decide)
/// and compares `SUBSYSTEM=<subsystem>\0` there. Attach it before `bind` so that nothing
/// unfiltered is queued. Returns 0, or -1 with errno (EINVAL: `subsystem` empty or longer than
/// 48 bytes).
int csystem_attach_uevent_subsystem_filter(int fd, const char *subsystem);

/// How many header bytes the uevent filter scans for the header's end.
#define CSYSTEM_UEVENT_FILTER_SCAN 640

/// Forwards `signals` (`count` of them) to a pipe for the rest of the process's life: a
/// handler (SA_RESTART) writes each caught signal's number as one byte, without blocking, to
/// the pipe's write end (the self-pipe trick: any thread may catch the signal, and the reader
/// needs no signal mask), and unblocks them in the calling thread (a parent may have left them
/// blocked). Returns the read end (non-blocking, close-on-exec), or -1 with errno. Call it
/// once, on the main thread before any other thread exists, so that every thread inherits
/// the mask.
int csystem_forward_signals_to_pipe(const int *signals, int count);

/// The read end `csystem_forward_signals_to_pipe` returned, or -1 if it was not called.
int csystem_signal_pipe(void);

/// A key of the runs' byte counters: a run's cgroup (its cgroup v2 id, the directory's inode
/// number), an interface index with `CSYSTEM_RUN_BYTES_INGRESS` set for received bytes.
struct csystem_run_bytes_key {
  unsigned long long cgroup;
  unsigned int interface;
  unsigned int padding;
};

/// The bit set in `csystem_run_bytes_key.interface` for received bytes.
#define CSYSTEM_RUN_BYTES_INGRESS 0x80000000u

/// The cgroup of the key that holds the bytes of packets that found the map full (interface 0):
/// no cgroup has this id.
#define CSYSTEM_RUN_BYTES_UNCOUNTED 0xFFFFFFFFFFFFFFFFull

/// The runs' byte counters in the kernel: a `BPF_MAP_TYPE_HASH` of `max_entries` from a
/// `csystem_run_bytes_key` to a `u64` of IP bytes (headers included, as systemd's
/// `IPAccounting=` counts them), its `CSYSTEM_RUN_BYTES_UNCOUNTED` key inserted (0). Returns the
/// map's descriptor (close-on-exec), or -1 with errno.
int csystem_run_bytes_map_create(unsigned int max_entries);

/// Loads the `cgroup_skb` program that adds each packet's length to `map_fd` (a
/// `csystem_run_bytes_map_create` map) under the cgroup of its socket and its interface
/// (`ingress`: the receiving one, with `CSYSTEM_RUN_BYTES_INGRESS`; else the sending one) and
/// lets it pass. Attached to a parent cgroup it counts every cgroup below. The program is
/// written here instruction by instruction (systemd's IP accounting does the same): about 50
/// instructions need no compiler, object file or libbpf. A packet whose key cannot be inserted
/// (the map is full) is added to the `CSYSTEM_RUN_BYTES_UNCOUNTED` key instead. Returns the program's descriptor, or
/// -1 with errno (EPERM without `CAP_BPF`/`CAP_SYS_ADMIN`).
int csystem_run_bytes_program_load(int map_fd, int ingress);

/// The capped runs' classes in the kernel: a `BPF_MAP_TYPE_HASH` of `max_entries` from a run
/// cgroup's id (a `u64`, the directory's inode number) to its HTB class id (a `u32`). Returns
/// the map's descriptor (close-on-exec), or -1 with errno.
int csystem_run_priority_map_create(unsigned int max_entries);
/// Loads the `cgroup_skb` egress program that sets the priority of each packet whose socket's
/// cgroup is in `map_fd` (a `csystem_run_priority_map_create` map) to the class id there (HTB
/// takes a priority naming one of its classes as that class), and lets every packet pass: 13
/// instructions. Loaded once and linked to the directory of run cgroups, so a capped run costs a
/// map update, not a program load (the verifier). Returns the program's descriptor, or -1 with
/// errno.
int csystem_run_priority_program_load(int map_fd);
/// Puts the packets of run cgroup `cgroup` in class `priority`: 0, or -1 with errno.
int csystem_run_priority_set(int map_fd, unsigned long long cgroup, unsigned int priority);
/// Takes run cgroup `cgroup` out of the map: 0, or -1 with errno (ENOENT: it was not there).
int csystem_run_priority_clear(int map_fd, unsigned long long cgroup);

/// Links `program_fd` to the cgroup v2 directory `cgroup_fd` at its ingress or egress hook
/// (`BPF_LINK_CREATE`): the attachment lasts as long as the returned link descriptor is open
/// (a process killed with SIGKILL leaves none behind). Returns the link's descriptor, or -1
/// with errno.
int csystem_cgroup_program_link(int program_fd, int cgroup_fd, int ingress);

/// Copies up to `capacity` entries of `map_fd` into `keys` and `values`; returns how many, or
/// -1 with errno. Entries added during the walk may be missed; read again for them.
int csystem_run_bytes_read(
  int map_fd, struct csystem_run_bytes_key *keys, unsigned long long *values, int capacity);

/// Deletes the entry `key` of `map_fd`. Returns 0, or -1 with errno (ENOENT: none).
int csystem_run_bytes_delete(int map_fd, const struct csystem_run_bytes_key *key);

#endif
