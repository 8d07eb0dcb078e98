package dev.eddy.config;

import com.typesafe.config.Config;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;

/**
 * Where the IP-to-location database behind PostHog's {@code $geoip_*} properties is (of captured events, their persons
 * and flag evaluation).
 *
 * @param database a MaxMind DB ({@code .mmdb}) file, or a directory whose {@code .mmdb} files are all used (one for
 *                 IPv4 and one for IPv6, as some distributions ship them); empty: no {@code $geoip_*} property is
 *                 derived
 */
public record GeoIpConfig(Optional<Path> database) {

    public GeoIpConfig {
        database.ifPresent(p -> Validation.require(Files.isReadable(p),
                "geoip.database " + p + " does not exist or cannot be read"));
    }

    static GeoIpConfig from(final Config root) {
        final String database = root.getConfig("geoip").getString("database").trim();
        return new GeoIpConfig(database.isEmpty() ? Optional.empty() : Optional.of(Path.of(database)));
    }
}
