#!/usr/bin/env bash
# The filesystem of Eddy's container image, besides the jar: the C and C++ runtimes the JVM and RocksDB load (from
# Debian's packages of this machine's release), a Java runtime of only the modules Eddy uses (jlink of the JDK that
# builds), a non-root user (65532) and a world-writable /tmp. Usage: rootfs.sh DIR JAR [CLASSES]. No Docker daemon is needed:
# the Jib Maven plugin makes the image from DIR. CLASSES, if given, is made (empty): Jib reads the module's classes,
# and this module has none.
set -euo pipefail
root="$1"
jar="$2"
[ -z "${3:-}" ] || mkdir -p "$3"
work="$(dirname "$root")/debs"
rm -rf "$root" "$work"
mkdir -p "$root" "$work"
# Debian's packages, fetched as files (no installation), unpacked into the image.
(cd "$work" && apt-get download libc6 libgcc-s1 libstdc++6 zlib1g >/dev/null 2>&1) \
  || { apt-get update >/dev/null 2>&1 && (cd "$work" && apt-get download libc6 libgcc-s1 libstdc++6 zlib1g >/dev/null); }
for deb in "$work"/*.deb; do
  dpkg-deb -x "$deb" "$root"
done
rm -rf "$root"/usr/share/doc "$root"/usr/share/lintian "$root"/usr/share/gcc "$root"/usr/share/gdb "$root"/usr/lib/*/gconv
# The modules jdeps finds in eddy.jar, and elliptic-curve TLS for a secured Kafka cluster.
modules="$(jdeps --ignore-missing-deps --print-module-deps --multi-release 17 -q "$jar"),jdk.crypto.ec"
"${JAVA_HOME:-$(dirname "$(dirname "$(readlink -f "$(command -v java)")")")}/bin/jlink" --add-modules "$modules" \
  --strip-debug --no-header-files --no-man-pages --compress=2 --output "$root/opt/java"
mkdir -p "$root/app" "$root/tmp" "$root/etc" "$root/var/lib/eddy"
cp "$jar" "$root/app/eddy.jar"
printf 'root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n' > "$root/etc/passwd"
printf 'root:x:0:\nnonroot:x:65532:\n' > "$root/etc/group"
printf 'hosts: files dns\n' > "$root/etc/nsswitch.conf"
echo "image filesystem in $root: $(du -sh "$root" | cut -f1) (Java modules: $modules)"
