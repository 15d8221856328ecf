# shellcheck shell=bash disable=SC2154  # $here comes from run.sh
# Helpers for Tests/wifi/run.sh: the guest's initramfs (an uncompressed newc cpio archive).
# Sourced, not run. Expects: $here (Tests/wifi).

# Copies the executable FILE to ROOT/DESTINATION with every shared library `ldd` names, at
# the same paths (the dynamic loader included).
# Usage: copy_with_libraries ROOT FILE DESTINATION
copy_with_libraries() {
  local root=$1 file=$2 destination=$3 library
  install -D -m 0755 "$file" "$root/$destination"
  for library in $(ldd "$file" 2>/dev/null | grep -o '/[^ ]*' || true); do
    [[ -e $root/$library ]] || install -D -m 0755 "$(realpath "$library")" "$root/$library"
  done
}

# Builds the initramfs in WORK and prints its path: busybox, the tools, BINARY (stripped copy)
# as /usr/bin/backgrounder, the kernel's modules for VERSION from KERNEL, TEST_POWER (the
# out-of-tree test_power.ko, test-power.sh) as /lib/test_power.ko, and Tests/wifi/guest.
# Usage: build_initramfs WORK KERNEL VERSION BINARY TEST_POWER
build_initramfs() {
  local work=$1 kernel=$2 version=$3 binary=$4 test_power=$5 root tool libc
  root="$work/initramfs"
  mkdir -p "$root"/{bin,sbin,usr/bin,usr/sbin,etc/backgrounder,etc/wifi,proc,sys,dev,run,tmp}
  mkdir -p "$root/var/lib" "$root/root" "$root/lib/modules"
  ln -s ../run "$root/var/run"
  install -m 0755 "$(command -v busybox)" "$root/bin/busybox"
  for tool in hostapd wpa_supplicant wpa_cli iw ip; do
    copy_with_libraries "$root" "$(command -v "$tool")" "usr/sbin/$tool"
  done
  # The kernel's request_module runs /sbin/modprobe; kmod picks its applet from argv[0].
  copy_with_libraries "$root" "$(realpath "$(command -v modprobe)")" sbin/modprobe
  ln -s modprobe "$root/sbin/insmod"
  install -m 0644 "$test_power" "$root/lib/test_power.ko"
  copy_with_libraries "$root" "$binary" usr/bin/backgrounder
  # glibc opens libgcc_s.so.1 itself for pthread_exit (`ldd` does not list it): an installed
  # system has it, the .deb depends on libgcc-s1. Without it `history` aborts in the guest.
  libc=$(ldd "$binary" | grep -o '/[^ ]*/libc\.so\.6' | head -n 1)
  install -D -m 0755 "$(realpath "$(dirname "$libc")/libgcc_s.so.1")" \
    "$root/$(dirname "$libc")/libgcc_s.so.1"
  strip --strip-unneeded "$root/usr/bin/backgrounder" 2>/dev/null || true
  cp -a "$kernel/lib/modules/$version" "$root/lib/modules/"
  install -m 0755 "$here/guest/init" "$root/init"
  install -m 0644 "$here/guest/config.toml" "$root/etc/backgrounder/config.toml"
  install -m 0644 "$here/guest/usb.toml" "$root/etc/backgrounder/usb.toml"
  install -m 0644 "$here/guest/ssids.toml" "$root/etc/backgrounder/ssids.toml"
  install -m 0644 "$here/guest/cgroup.toml" "$root/etc/backgrounder/cgroup.toml"
  install -m 0644 "$here/guest/power.toml" "$root/etc/backgrounder/power.toml"
  install -m 0644 "$here/guest/shape.toml" "$root/etc/backgrounder/shape.toml"
  install -m 0644 "$here/guest/vrf.toml" "$root/etc/backgrounder/vrf.toml"
  install -m 0755 "$here/guest/power-job" "$root/etc/backgrounder/power-job"
  install -m 0600 "$here/guest"/{hostapd-pixel.conf,hostapd-office.conf,wpa_supplicant.conf} \
    "$root/etc/wifi/"
  (cd "$root" && find . -print0 | cpio --null -o -H newc -R 0:0 --quiet) >"$work/initramfs.cpio"
  echo "$work/initramfs.cpio"
}
