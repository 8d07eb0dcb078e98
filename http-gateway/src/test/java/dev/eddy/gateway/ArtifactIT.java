package dev.eddy.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.jar.JarFile;
import org.junit.jupiter.api.Test;

/**
 * The runnable jar the package phase made ({@code target/eddy.jar}): its version in the manifest, and natives only
 * for the platforms Eddy runs on (Linux x86-64 and aarch64, glibc and musl; macOS), not the 15 RocksDB ships.
 */
class ArtifactIT {
    private static final Path JAR = Path.of("target", "eddy.jar");

    @Test
    void theJarCarriesItsVersionAndOnlyTheNativesEddyRunsOn() throws IOException {
        assertThat(JAR).exists();
        try (JarFile jar = new JarFile(JAR.toFile())) {
            assertThat(jar.getManifest().getMainAttributes().getValue("Implementation-Version")).isNotBlank();
            assertThat(jar.getManifest().getMainAttributes().getValue("Main-Class")).isEqualTo("dev.eddy.gateway.Main");
            final List<String> natives = jar.stream().map(java.util.zip.ZipEntry::getName)
                    .filter(n -> n.endsWith(".so") || n.endsWith(".dll") || n.endsWith(".jnilib") || n.endsWith(".dylib")).toList();
            assertThat(natives).contains("librocksdbjni-linux64.so", "librocksdbjni-linux-aarch64.so", "librocksdbjni-linux64-musl.so",
                    "librocksdbjni-osx-arm64.jnilib");
            assertThat(natives).anyMatch(n -> n.matches("linux/amd64/libzstd-jni-[0-9.-]+\\.so"))
                    .anyMatch(n -> n.matches("org/xerial/snappy/native/Linux/x86_64/libsnappyjava\\.so"));
            assertThat(natives).noneMatch(n -> n.endsWith(".dll") || n.contains("s390x") || n.contains("ppc64") || n.contains("linux32"));
        }
        assertThat(Files.size(JAR)).as("the jar's bytes").isLessThan(80L * 1024 * 1024);
    }
}
