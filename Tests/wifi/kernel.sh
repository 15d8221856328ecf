# shellcheck shell=bash disable=SC2154  # $cache and $work come from run.sh
# Helpers for Tests/wifi/run.sh: Debian's own kernel (linux-image-amd64) and the modules the
# guest needs, fetched with `apt-get download` (never installed) and kept in $cache.
# Sourced, not run. Expects: $cache (kept between runs), $work (a scratch directory).

# Modules (or the kernel's module aliases) the guest needs: the simulated radios with their
# dependencies, and the crypto templates mac80211 asks for (`request_module`) when WPA2 keys
# are installed (CCMP; GCMP and BIP for completeness); for USB tethering, dummy_hcd, the
# configfs gadget functions and the host drivers of their links; for bandwidth caps, a veth
# pair and HTB; the VRF driver.
guest_modules=(mac80211_hwsim crypto-ccm crypto-ctr crypto-gcm crypto-cmac crypto-seqiv
  crypto-ghash dummy_hcd libcomposite usb_f_rndis usb_f_ncm usb_f_ecm rndis_host cdc_ncm
  cdc_ether veth sch_htb vrf)

# apt-get download into the current directory, quiet; as root apt would warn that its
# sandbox user cannot write there, so it downloads as root.
apt_download() {
  apt-get -q -o APT::Sandbox::User=root download "$@" >"$work/apt-download.log" 2>&1 || {
    tail -5 "$work/apt-download.log" >&2
    return 1
  }
}

# Prints the directory of the prepared kernel: vmlinuz and lib/modules/VERSION with the
# modules above, their dependencies and a modules.dep made by depmod. Downloads the package
# linux-image-amd64 depends on when that version is not prepared yet; with no download
# possible, the newest prepared kernel in the cache is used.
prepared_kernel() {
  local meta package version directory
  mkdir -p "$cache"
  if ! meta=$(cd "$cache" && apt_download linux-image-amd64 && ls -t linux-image-amd64_*.deb \
    | head -1); then
    directory=$(ls -dt "$cache"/kernel-*/ 2>/dev/null | head -1)
    [[ -n $directory && -f $directory/complete ]] || return 1
    echo "== apt-get download failed; using the cached ${directory%/}" >&2
    echo "${directory%/}"
    return
  fi
  # Depends: linux-image-6.1.0-NN-amd64 (= 6.1.x-y)
  package=$(dpkg-deb -f "$cache/$meta" Depends | tr ',' '\n' | sed -e 's/(.*)//' -e 's/ //g' \
    | grep -m1 '^linux-image-[0-9]')
  [[ -n $package ]] || { echo "$meta names no versioned linux-image package" >&2; return 1; }
  version=${package#linux-image-}
  directory="$cache/kernel-$version"
  if [[ ! -f $directory/complete ]] || ! has_guest_modules "$directory" "$version"; then
    prepare_kernel "$package" "$version" "$directory" || return 1
  fi
  echo "$directory"
}

# Whether the kernel in DIRECTORY has every module of $guest_modules with its dependencies.
# Usage: has_guest_modules DIRECTORY VERSION
has_guest_modules() {
  modprobe -d "$1" -S "$2" -a --show-depends "${guest_modules[@]}" >/dev/null 2>&1
}

# Downloads PACKAGE and extracts its vmlinuz and the modules the guest needs into DIRECTORY.
# Usage: prepare_kernel PACKAGE VERSION DIRECTORY
prepare_kernel() {
  local package=$1 version=$2 directory=$3 deb staging module_list
  echo "== fetching $package (apt-get download, about 70 MB; cached in $cache)" >&2
  (cd "$cache" && apt_download "$package") || return 1
  deb=$(ls -t "$cache/${package}"_*.deb | head -1)
  staging=$(mktemp -d "$cache/extract.XXXXXX")
  rm -rf "$directory"
  mkdir -p "$directory/lib/modules/$version"
  # The whole module tree (depmod needs every module to resolve dependencies), then only the
  # closure of what the guest loads is kept.
  dpkg-deb --fsys-tarfile "$deb" | tar -x -C "$staging" --wildcards \
    "./boot/vmlinuz-$version" "./lib/modules/$version/*" || { rm -rf "$staging"; return 1; }
  depmod -b "$staging" "$version" || { rm -rf "$staging"; return 1; }
  module_list=$(modprobe -d "$staging" -S "$version" -a --show-depends "${guest_modules[@]}" \
    | awk '$1 == "insmod" { print $2 }' | sort -u) || { rm -rf "$staging"; return 1; }
  local module relative
  for module in $module_list; do
    relative=${module#"$staging"/lib/modules/"$version"/}
    install -D -m 0644 "$module" "$directory/lib/modules/$version/$relative"
  done
  cp "$staging/lib/modules/$version"/modules.{builtin,builtin.modinfo,order} \
    "$directory/lib/modules/$version/"
  cp "$staging/boot/vmlinuz-$version" "$directory/vmlinuz"
  rm -rf "$staging"
  depmod -b "$directory" "$version" || return 1
  has_guest_modules "$directory" "$version" || return 1
  echo "$version" >"$directory/complete"
  # The large package is not needed once extracted.
  rm -f "$deb"
  echo "== kernel $version prepared: $(du -sh "$directory" | cut -f1)" >&2
}
