# shellcheck shell=bash disable=SC2154  # $cache and $work come from run.sh
# Helpers for Tests/wifi/run.sh: the kernel's test power-supply driver, test_power.ko, built out
# of tree for the guest's kernel. Its source (drivers/power/supply/test_power.c) comes from
# Debian's linux-source-6.1 at the guest kernel's own package version (the closest one apt
# offers when that is gone, said on stderr), its build tree from linux-headers-VERSION and what
# that depends on (the -common headers, linux-kbuild-6.1), all with `apt-get download`, never
# installed, and extracted in a scratch directory. The built module is kept in
# $cache/test-power-VERSION: the ~140 MB source package is fetched once per kernel.
# Sourced, not run. Expects: $cache, $work, apt_download (kernel.sh). Needs gcc-12, make, xz.

# Prints the path of test_power.ko for the kernel VERSION, building it when not cached.
# Usage: prepared_test_power VERSION
prepared_test_power() {
  local version=$1 directory="$cache/test-power-$1"
  if [[ ! -f $directory/complete || ! -f $directory/test_power.ko ]]; then
    build_test_power "$version" "$directory" || return 1
  fi
  echo "$directory/test_power.ko"
}

# The Debian package version the headers of kernel VERSION have (6.1.192-2 for
# 6.1.0-56-amd64): the version of linux-source-6.1 the kernel was built from.
kernel_package_version() {
  apt-cache show --no-all-versions "linux-headers-$1" 2>/dev/null \
    | sed -n 's/^Version: //p' | head -n 1
}

# Builds test_power.ko for VERSION into DIRECTORY.
# Usage: build_test_power VERSION DIRECTORY
build_test_power() {
  local version=$1 directory=$2 package_version staging headers common kbuild source_deb used
  package_version=$(kernel_package_version "$version")
  [[ -n $package_version ]] || { echo "apt knows no linux-headers-$version" >&2; return 1; }
  staging=$(mktemp -d "$work/test-power.XXXXXX")
  echo "== building test_power.ko for $version (linux-source-6.1 $package_version, about" \
    "140 MB, and linux-headers-$version; the module is cached in $directory)" >&2
  (cd "$staging" && apt_download "linux-headers-$version") || return 1
  headers=$(ls "$staging"/linux-headers-"$version"_*.deb)
  # Depends: linux-headers-6.1.0-NN-common (= V), linux-kbuild-6.1 (>= V), linux-compiler-…
  common=$(dpkg-deb -f "$headers" Depends | tr ',' '\n' | sed -e 's/(.*)//' -e 's/ //g' \
    | grep -m1 -- '-common$')
  kbuild=$(dpkg-deb -f "$headers" Depends | tr ',' '\n' | sed -e 's/(.*)//' -e 's/ //g' \
    | grep -m1 '^linux-kbuild-')
  [[ -n $common && -n $kbuild ]] || { echo "$headers: no -common or kbuild dependency" >&2; return 1; }
  (cd "$staging" && apt_download "$common" "$kbuild") || return 1
  if (cd "$staging" && apt_download "linux-source-6.1=$package_version"); then
    used=$package_version
  else
    # The kernel's own source version is gone from the archive: the newest 6.1 one apt has.
    (cd "$staging" && apt_download linux-source-6.1) || return 1
    used=$(dpkg-deb -f "$(ls "$staging"/linux-source-6.1_*.deb)" Version)
    echo "== linux-source-6.1 $package_version is not available; using $used, the closest" \
      "apt offers (the module is still built against linux-headers-$version)" >&2
  fi
  source_deb=$(ls "$staging"/linux-source-6.1_*.deb)
  mkdir -p "$staging/root" "$staging/module"
  local deb
  for deb in "$staging"/linux-headers-*.deb "$staging"/linux-kbuild-*.deb; do
    dpkg-deb -x "$deb" "$staging/root" || return 1
  done
  # The headers' Makefile includes the -common tree by its installed path; point it here.
  sed -i "s|^include /usr/src/|include $staging/root/usr/src/|" \
    "$staging/root/usr/src/linux-headers-$version/Makefile"
  # Only test_power.c is taken from the source tarball (xz, streamed).
  dpkg-deb --fsys-tarfile "$source_deb" | tar -xO ./usr/src/linux-source-6.1.tar.xz | xz -dc \
    | tar -x -O --wildcards '*/drivers/power/supply/test_power.c' >"$staging/module/test_power.c" \
    || return 1
  [[ -s $staging/module/test_power.c ]] || { echo "no test_power.c in $source_deb" >&2; return 1; }
  echo 'obj-m := test_power.o' >"$staging/module/Makefile"
  make -s -C "$staging/root/usr/src/linux-headers-$version" M="$staging/module" modules \
    >"$staging/make.log" 2>&1 || { tail -n 20 "$staging/make.log" >&2; return 1; }
  rm -rf "$directory"
  mkdir -p "$directory"
  install -m 0644 "$staging/module/test_power.ko" "$directory/test_power.ko"
  echo "linux-source-6.1 $used, linux-headers-$version $package_version" >"$directory/complete"
  rm -rf "$staging"
  echo "== test_power.ko built: $(cat "$directory/complete")" >&2
}
