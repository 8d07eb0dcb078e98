package dev.eddy.gateway.geoip;

import com.fasterxml.jackson.databind.node.ObjectNode;
import com.maxmind.db.CHMCache;
import com.maxmind.db.Metadata;
import com.maxmind.db.Reader;
import dev.eddy.serde.Json;
import java.io.Closeable;
import java.io.IOException;
import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * PostHog's {@code $geoip_*} properties of an IP address, read from MaxMind DB ({@code .mmdb}) files: what PostHog
 * adds to captured events and their persons (capture's {@code GeoIpTransformation}) and to the person properties when
 * it evaluates flags for {@code /decide} (unless the request sets {@code geoip_disable}).
 *
 * <p>Two record layouts are understood, told apart per record: MaxMind's GeoLite2/GeoIP2 City layout ({@code
 * city.names.en}, {@code country.iso_code}, {@code location.latitude}, {@code subdivisions[0].iso_code}, ...) and the
 * flat one of the ip-location-db files, DB-IP's included ({@code country_code}, {@code state1}, {@code state2},
 * {@code city}, {@code postcode}, {@code latitude}, {@code longitude}, {@code timezone}); there the country and
 * continent names come from {@link Countries}. A property the database does not have for an address is left out.
 *
 * <p>The files are memory-mapped once and read by any number of threads; decoded records are cached by MaxMind's
 * reader. Bad input never throws: an unparseable, private, loopback or unknown address has no properties.
 */
public final class GeoIp implements Closeable {
    /**
     * The properties PostHog's flag evaluation adds (the Django {@code /decide} and the Rust flags service alike):
     * these seven, string values only. {@link #lookup} also gives the coordinates and subdivisions, as PostHog's
     * GeoIP transformation sets them on events and persons at ingestion.
     */
    public static final List<String> FLAG_PROPERTIES = List.of(
            "$geoip_city_name", "$geoip_country_name", "$geoip_country_code", "$geoip_continent_name",
            "$geoip_continent_code", "$geoip_postal_code", "$geoip_time_zone");

    private static final Logger LOG = LoggerFactory.getLogger(GeoIp.class);
    private static final String OCTET = "(25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)";
    /** Dotted quad without leading zeros ("010.0.0.1" is ambiguous: octal to some parsers). */
    private static final Pattern IPV4 = Pattern.compile(OCTET + "(\\." + OCTET + "){3}");
    /** The characters of an IPv6 literal (an embedded IPv4 tail included); no zone id, no brackets. */
    private static final Pattern IPV6 = Pattern.compile("[0-9A-Fa-f:][0-9A-Fa-f:.]{1,44}");

    /** One open file and the IP version of its search tree. */
    private record Database(Path file, Reader reader) {
        boolean ipv6() {
            return reader.getMetadata().ipVersion() == 6;
        }
    }

    private final List<Database> databases;
    /** IPv4 asks the IPv4 files first, then the IPv6 ones (a GeoLite2 file keeps IPv4 under {@code ::/96}). */
    private final List<Database> forIpv4;
    /** IPv6 asks only IPv6 files: an IPv4-only file would take the first 32 bits for an IPv4 address. */
    private final List<Database> forIpv6;

    private GeoIp(final List<Database> databases) {
        this.databases = List.copyOf(databases);
        this.forIpv4 = Stream.concat(databases.stream().filter(d -> !d.ipv6()), databases.stream().filter(Database::ipv6))
                .toList();
        this.forIpv6 = databases.stream().filter(Database::ipv6).toList();
    }

    /**
     * Opens a MaxMind DB file, or every {@code .mmdb} file of a directory (in name order), memory-mapped.
     *
     * @throws IOException naming the path when it does not exist, holds no {@code .mmdb} file or is not a MaxMind DB
     */
    public static GeoIp open(final Path path) throws IOException {
        if (!Files.exists(path)) {
            throw new IOException("GeoIP database " + path + " does not exist");
        }
        final List<Path> files;
        if (Files.isDirectory(path)) {
            try (Stream<Path> listing = Files.list(path)) {
                files = listing.filter(p -> p.getFileName().toString().endsWith(".mmdb") && Files.isRegularFile(p))
                        .sorted().toList();
            }
            if (files.isEmpty()) {
                throw new IOException("GeoIP database directory " + path + " has no .mmdb file");
            }
        } else {
            files = List.of(path);
        }
        final List<Database> opened = new ArrayList<>();
        try {
            for (final Path file : files) {
                opened.add(new Database(file, openReader(file)));
            }
        } catch (final IOException e) {
            closeAll(opened);
            throw e;
        }
        return new GeoIp(opened);
    }

    /** Derives nothing: every lookup is empty. */
    public static GeoIp disabled() {
        return new GeoIp(List.of());
    }

    /** Whether a database is open. */
    public boolean enabled() {
        return !databases.isEmpty();
    }

    /**
     * Every {@code $geoip_*} property the database has for {@code ip}: {@code $geoip_city_name},
     * {@code $geoip_country_name}, {@code $geoip_country_code}, {@code $geoip_continent_name},
     * {@code $geoip_continent_code}, {@code $geoip_postal_code}, {@code $geoip_latitude}, {@code $geoip_longitude},
     * {@code $geoip_accuracy_radius}, {@code $geoip_time_zone} and {@code $geoip_subdivision_1_code}/{@code _name},
     * {@code $geoip_subdivision_2_code}/{@code _name}. Empty for a null, unparseable, non-public or unknown address;
     * never throws. A new node each call, free to modify.
     */
    public ObjectNode lookup(final String ip) {
        return find(ip).map(GeoIp::properties).orElseGet(() -> Json.mapper().createObjectNode());
    }

    /** The subset of {@link #lookup} PostHog adds for flag evaluation: {@link #FLAG_PROPERTIES}. */
    public ObjectNode flagProperties(final String ip) {
        final ObjectNode properties = lookup(ip);
        properties.retain(FLAG_PROPERTIES);
        return properties;
    }

    /**
     * An IP literal as an address, or empty. Never asks DNS: only a dotted quad or a string of IPv6 characters
     * containing a colon reaches the JDK's parser, which takes those as literals.
     */
    static Optional<InetAddress> parseAddress(final String ip) {
        if (ip == null) {
            return Optional.empty();
        }
        final String s = ip.strip();
        try {
            if (IPV4.matcher(s).matches()) {
                final String[] parts = s.split("\\.");
                final byte[] bytes = new byte[4];
                for (int i = 0; i < 4; i++) {
                    bytes[i] = (byte) Integer.parseInt(parts[i]);
                }
                return Optional.of(InetAddress.getByAddress(bytes));
            }
            if (s.indexOf(':') >= 0 && IPV6.matcher(s).matches()) {
                return Optional.of(InetAddress.getByName(s));
            }
        } catch (final UnknownHostException | IllegalArgumentException e) {
            // not a literal after all
        }
        return Optional.empty();
    }

    /**
     * Whether an address can be in a location database: not loopback, private (RFC 1918, IPv6 unique local, shared
     * 100.64.0.0/10), link-local, unspecified, "this network" or multicast. PostHog skips 127.0.0.1, ::1 and
     * 192.168.0.0/16 before the lookup and finds nothing for the rest.
     */
    static boolean isPublic(final InetAddress address) {
        if (address.isAnyLocalAddress() || address.isLoopbackAddress() || address.isLinkLocalAddress()
                || address.isSiteLocalAddress() || address.isMulticastAddress()) {
            return false;
        }
        final byte[] b = address.getAddress();
        if (b.length == 4) {
            return b[0] != 0 && !((b[0] & 0xff) == 100 && (b[1] & 0xc0) == 64);
        }
        return (b[0] & 0xfe) != 0xfc;
    }

    private Optional<Map<?, ?>> find(final String ip) {
        if (databases.isEmpty()) {
            return Optional.empty();
        }
        final Optional<InetAddress> parsed = parseAddress(ip).filter(GeoIp::isPublic);
        if (parsed.isEmpty()) {
            return Optional.empty();
        }
        final InetAddress address = parsed.get();
        for (final Database database : address instanceof Inet4Address ? forIpv4 : forIpv6) {
            try {
                final Map<?, ?> found = database.reader().get(address, Map.class);
                if (found != null) {
                    return Optional.of(found);
                }
            } catch (final IOException | RuntimeException e) {
                // A corrupt or closed file: the request goes on without location.
                LOG.warn("GeoIP lookup of {} in {} failed: {}", address.getHostAddress(), database.file(), e.toString());
            }
        }
        return Optional.empty();
    }

    /** The {@code $geoip_*} properties of one database record, in either layout. */
    static ObjectNode properties(final Map<?, ?> record) {
        final ObjectNode out = Json.mapper().createObjectNode();
        if (record.get("country") instanceof Map || record.get("city") instanceof Map
                || record.get("location") instanceof Map || record.get("continent") instanceof Map) {
            fromGeoLite2(record, out);
        } else {
            fromFlat(record, out);
        }
        return out;
    }

    /** MaxMind's GeoLite2/GeoIP2 City layout: nested maps with English names under {@code names.en}. */
    private static void fromGeoLite2(final Map<?, ?> r, final ObjectNode out) {
        text(out, "$geoip_city_name", at(r, "city", "names", "en"));
        text(out, "$geoip_country_name", at(r, "country", "names", "en"));
        text(out, "$geoip_country_code", at(r, "country", "iso_code"));
        text(out, "$geoip_continent_name", at(r, "continent", "names", "en"));
        text(out, "$geoip_continent_code", at(r, "continent", "code"));
        text(out, "$geoip_postal_code", at(r, "postal", "code"));
        number(out, "$geoip_latitude", at(r, "location", "latitude"));
        number(out, "$geoip_longitude", at(r, "location", "longitude"));
        number(out, "$geoip_accuracy_radius", at(r, "location", "accuracy_radius"));
        text(out, "$geoip_time_zone", at(r, "location", "time_zone"));
        if (r.get("subdivisions") instanceof List<?> subdivisions) {
            for (int i = 0; i < Math.min(2, subdivisions.size()); i++) {
                if (subdivisions.get(i) instanceof Map<?, ?> subdivision) {
                    text(out, "$geoip_subdivision_" + (i + 1) + "_code", subdivision.get("iso_code"));
                    text(out, "$geoip_subdivision_" + (i + 1) + "_name", at(subdivision, "names", "en"));
                }
            }
        }
    }

    /**
     * The ip-location-db layout: flat strings and numbers, empty strings for unknown values, a country code but no
     * country or continent name, subdivision names ({@code state1}, {@code state2}) but no subdivision codes.
     */
    private static void fromFlat(final Map<?, ?> r, final ObjectNode out) {
        final Optional<String> country = Optional.ofNullable(r.get("country_code"))
                .filter(String.class::isInstance).map(String.class::cast).filter(c -> !c.isBlank());
        final Optional<String> continent = country.flatMap(Countries::continentCode);
        text(out, "$geoip_city_name", r.get("city"));
        text(out, "$geoip_country_name", country.flatMap(Countries::name).orElse(null));
        text(out, "$geoip_country_code", country.orElse(null));
        text(out, "$geoip_continent_name", continent.flatMap(Countries::continentName).orElse(null));
        text(out, "$geoip_continent_code", continent.orElse(null));
        text(out, "$geoip_postal_code", r.get("postcode"));
        number(out, "$geoip_latitude", r.get("latitude"));
        number(out, "$geoip_longitude", r.get("longitude"));
        text(out, "$geoip_time_zone", r.get("timezone"));
        text(out, "$geoip_subdivision_1_name", r.get("state1"));
        text(out, "$geoip_subdivision_2_name", r.get("state2"));
    }

    private static Object at(final Map<?, ?> map, final String... path) {
        Object current = map;
        for (final String key : path) {
            if (!(current instanceof Map<?, ?> m)) {
                return null;
            }
            current = m.get(key);
        }
        return current;
    }

    private static void text(final ObjectNode out, final String key, final Object value) {
        if (value instanceof String s && !s.isBlank()) {
            out.put(key, s);
        }
    }

    private static void number(final ObjectNode out, final String key, final Object value) {
        if (value instanceof Float f) {
            // Through the decimal text: 37.422f is 37.422, not 37.42200088500977.
            number(out, key, Double.valueOf(f.toString()));
        } else if (value instanceof Double d) {
            if (Double.isFinite(d)) {
                out.put(key, d);
            }
        } else if (value instanceof Number n) {
            out.put(key, n.longValue());
        }
    }

    private static Reader openReader(final Path file) throws IOException {
        try {
            return new Reader(file.toFile(), Reader.FileMode.MEMORY_MAPPED, new CHMCache());
        } catch (final IOException | RuntimeException e) {
            throw new IOException("GeoIP database " + file + " is not a readable MaxMind DB (.mmdb) file: " + e.getMessage(), e);
        }
    }

    private static void closeAll(final List<Database> databases) {
        for (final Database database : databases) {
            try {
                database.reader().close();
            } catch (final IOException e) {
                LOG.debug("closing {}: {}", database.file(), e.toString());
            }
        }
    }

    @Override
    public void close() {
        closeAll(databases);
    }

    /** The files and their build dates, for the start-up log. */
    @Override
    public String toString() {
        if (databases.isEmpty()) {
            return "GeoIp[disabled]";
        }
        return databases.stream().map(d -> {
            final Metadata m = d.reader().getMetadata();
            return d.file() + " (" + m.databaseType() + ", IPv" + m.ipVersion() + ", built "
                    + m.buildTime().toString().substring(0, 10) + ")";
        }).collect(Collectors.joining(", ", "GeoIp[", "]"));
    }
}
