package dev.eddy.gateway.capture;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.NullNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import dev.eddy.gateway.geoip.GeoIp;
import dev.eddy.serde.Json;
import java.util.Arrays;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;
import java.util.stream.Collectors;

/**
 * PostHog's GeoIP transformation ({@code template-geoip}), applied to each event as capture builds it: the event gets
 * the {@code $geoip_*} properties of its address, its person gets the same by {@code $set} and, once, as
 * {@code $initial_geoip_*} by {@code $set_once}, which the topology applies as it applies any event's.
 *
 * <p>It runs here, in the gateway, rather than in the topology: the request's address is known only here (PostHog's
 * {@code $ip}: the event's own {@code $ip} when it has one, else the client address, first {@code X-Forwarded-For}
 * entry), the database is already open for {@code /decide}, streams instances need no copy of it, and the topology
 * stays a function of the events it reads, so a replay gives the same persons whatever database is installed later.
 *
 * <p>As PostHog's: nothing happens when the event's {@code $geoip_disable} is truthy, when there is no address, or when
 * the database knows nothing of it (a private, loopback or unknown address). Otherwise what the lookup found replaces
 * the event's own values of those keys (keys it did not find keep the event's values), and {@code $set} and
 * {@code $set_once} get every key of {@link #PERSON_KEYS}, null where the database has no value, over what the event
 * set for them. An event whose {@code $set} or {@code $set_once} is not an object is left as it is (PostHog's
 * transformation fails on it and passes the event on unchanged). Unlike PostHog's, 127.0.0.1 is not replaced by a
 * Swedish address for local development: a loopback address has no location.
 */
public final class GeoIpTransformation {
    /** The location keys PostHog's transformation sets on the person, each after {@code $geoip_} and {@code $initial_geoip_}. */
    static final List<String> PERSON_KEYS = List.of("city_name", "city_confidence", "subdivision_2_name",
            "subdivision_2_code", "subdivision_1_name", "subdivision_1_code", "country_name", "country_code",
            "continent_name", "continent_code", "postal_code", "latitude", "longitude", "accuracy_radius", "time_zone");
    private static final String GEOIP = "$geoip_";
    private static final String INITIAL_GEOIP = "$initial_geoip_";
    /** Each {@code $geoip_} key of {@link #PERSON_KEYS} and its {@code $initial_geoip_} key. */
    private static final Map<String, String> INITIAL = PERSON_KEYS.stream()
            .collect(Collectors.toMap(k -> GEOIP + k, k -> INITIAL_GEOIP + k, (a, b) -> a, LinkedHashMap::new));

    /**
     * Addresses recently seen, with what their location adds (empty: none). A browser sends its events a request or two
     * at a time from one address, so each would otherwise be looked up and its additions written again. Measured on the
     * 2-core machine (parse, build and envelope of a 1.2 KB posthog-js pageview, best of 16 rounds): 4.2 µs an event
     * without GeoIP, 5.5 µs from a recent address, 21.6 µs from a new address every request; in batches of 50, 3.3 and
     * 4.9 µs. An entry is about 5 KB; the database does not change while the process runs.
     */
    private static final int RECENT_ADDRESSES = 2048;

    private final Function<String, ObjectNode> locate;
    private final Cache<String, Optional<Additions>> recent = Caffeine.newBuilder().maximumSize(RECENT_ADDRESSES).build();

    /**
     * @param locate the {@code $geoip_*} properties of an address ({@link GeoIp#lookup}), empty when it has none; null:
     *               no database, the transformation does nothing
     */
    GeoIpTransformation(final Function<String, ObjectNode> locate) {
        this.locate = locate;
    }

    /** What the location of {@code address} adds to an event, or null when it has none. */
    private Additions additions(final String address) {
        return address == null ? null : recent.get(address, a -> Optional.ofNullable(Additions.of(locate.apply(a)))).orElse(null);
    }

    /** The transformation over {@code geoIp}; one that does nothing when no database is open. */
    public static GeoIpTransformation of(final GeoIp geoIp) {
        return new GeoIpTransformation(geoIp.enabled() ? geoIp::lookup : null);
    }

    /** The lookups of one request from {@code clientAddress} (may be null), which is looked up at most once. */
    public Lookups forRequest(final String clientAddress) {
        return locate == null ? Lookups.NONE : new Lookups(this, clientAddress);
    }

    /**
     * What {@link Lookups#apply} did to an event's properties.
     *
     * @param changed whether they changed
     * @param added   when every member it set is a key the properties did not have: those members as JSON ({@code
     *                "k":v,...}, no braces), so the properties as sent with them appended are the new properties;
     *                else null
     */
    record Applied(boolean changed, byte[] added) {
        static final Applied UNCHANGED = new Applied(false, null);

        /**
         * The bytes of the properties to write, given those as sent ({@code sent}, or null when the envelope must be
         * written from the tree anyway): unchanged, or with the added members appended, or null when only the tree
         * has the new properties.
         */
        byte[] properties(final byte[] sent) {
            if (!changed) {
                return sent;
            }
            if (added == null || sent == null) {
                return null;
            }
            return append(sent, added);
        }

        /**
         * The object {@code sent} (its bytes exactly as parsed: '{' first, '}' last) with {@code added} (members as
         * JSON, no braces, none of its keys) appended.
         */
        static byte[] append(final byte[] sent, final byte[] added) {
            int first = 1;
            while (first < sent.length - 1 && Character.isWhitespace(sent[first])) {
                first++;
            }
            final boolean empty = first == sent.length - 1;
            final byte[] out = new byte[sent.length + (empty ? 0 : 1) + added.length];
            System.arraycopy(sent, 0, out, 0, sent.length - 1);
            int at = sent.length - 1;
            if (!empty) {
                out[at++] = ',';
            }
            System.arraycopy(added, 0, out, at, added.length);
            out[out.length - 1] = '}';
            return out;
        }
    }

    /**
     * One request's lookups, used on the request's event loop only: a batch's events mostly share the client address,
     * whose additions are then found once per request. Additions are shared read only (events get copies of their
     * objects; their values are immutable nodes).
     */
    public static final class Lookups {
        /** Changes nothing: no database, or a historical migration (its events keep what they were captured with). */
        public static final Lookups NONE = new Lookups(null, null);

        private final GeoIpTransformation transformation;
        private final String clientAddress;
        private boolean clientLooked;
        private Additions client;

        private Lookups(final GeoIpTransformation transformation, final String clientAddress) {
            this.transformation = transformation;
            this.clientAddress = clientAddress;
        }

        /** Applies the transformation to one event's properties, in place. */
        Applied apply(final ObjectNode properties) {
            if (transformation == null || truthy(properties.get("$geoip_disable"))) {
                return Applied.UNCHANGED;
            }
            final JsonNode set = properties.get("$set");
            final JsonNode setOnce = properties.get("$set_once");
            if (!objectOrAbsent(set) || !objectOrAbsent(setOnce)) {
                return Applied.UNCHANGED;
            }
            final JsonNode ip = properties.get("$ip");
            final Additions additions = truthy(ip) ? transformation.additions(ip.isTextual() ? ip.asText() : ip.toString())
                    : clientAdditions();
            if (additions == null) {
                return Applied.UNCHANGED;
            }
            if (set == null && setOnce == null && noneOf(additions.location(), properties)) {
                // The common case: nothing to merge, every member is new.
                additions.members().fields().forEachRemaining(f -> properties.set(f.getKey(), f.getValue().deepCopy()));
                return new Applied(true, additions.bytes());
            }
            final ObjectNode personSet = set instanceof ObjectNode o ? o : properties.putObject("$set");
            final ObjectNode personSetOnce = setOnce instanceof ObjectNode o ? o : properties.putObject("$set_once");
            properties.setAll(additions.location());
            personSet.setAll((ObjectNode) additions.members().get("$set"));
            personSetOnce.setAll((ObjectNode) additions.members().get("$set_once"));
            return new Applied(true, null);
        }

        private Additions clientAdditions() {
            if (!clientLooked) {
                client = transformation.additions(clientAddress);
                clientLooked = true;
            }
            return client;
        }
    }

    /**
     * What a location adds to an event without {@code $set}, {@code $set_once} or {@code $geoip_*} keys of its own.
     *
     * @param location the {@code $geoip_*} properties found
     * @param members  those, then {@code $set} of every key of {@link #PERSON_KEYS} (null where not found) and
     *                 {@code $set_once} of the same as {@code $initial_geoip_*}; read only
     * @param bytes    {@code members} as JSON object members, without the braces
     */
    private record Additions(ObjectNode location, ObjectNode members, byte[] bytes) {
        /** The additions of {@code location}, or null when it is empty. */
        static Additions of(final ObjectNode location) {
            if (location.isEmpty()) {
                return null;
            }
            final ObjectNode members = location.deepCopy();
            final ObjectNode set = members.putObject("$set");
            final ObjectNode setOnce = members.putObject("$set_once");
            INITIAL.forEach((key, initial) -> {
                set.set(key, NullNode.getInstance());
                setOnce.set(initial, NullNode.getInstance());
            });
            for (final Iterator<Map.Entry<String, JsonNode>> it = location.fields(); it.hasNext();) {
                final Map.Entry<String, JsonNode> found = it.next();
                set.set(found.getKey(), found.getValue());
                final String initial = INITIAL.get(found.getKey());
                setOnce.set(initial != null ? initial : INITIAL_GEOIP + found.getKey().substring(GEOIP.length()), found.getValue());
            }
            final byte[] object;
            try {
                object = Json.mapper().writeValueAsBytes(members);
            } catch (final JsonProcessingException e) {
                throw new IllegalStateException("a tree of strings and numbers writes as JSON", e);
            }
            return new Additions(location, members, Arrays.copyOfRange(object, 1, object.length - 1));
        }
    }

    private static boolean noneOf(final ObjectNode keys, final ObjectNode properties) {
        for (final Iterator<String> it = keys.fieldNames(); it.hasNext();) {
            if (properties.has(it.next())) {
                return false;
            }
        }
        return true;
    }

    private static boolean objectOrAbsent(final JsonNode node) {
        return node == null || node.isNull() || node.isObject();
    }

    /** JavaScript's truthiness, as PostHog's transformation reads {@code $geoip_disable} and {@code $ip}. */
    private static boolean truthy(final JsonNode node) {
        if (node == null || node.isNull() || node.isMissingNode()) {
            return false;
        }
        if (node.isBoolean()) {
            return node.booleanValue();
        }
        if (node.isNumber()) {
            return node.doubleValue() != 0 && !Double.isNaN(node.doubleValue());
        }
        if (node.isTextual()) {
            return !node.textValue().isEmpty();
        }
        return true;
    }
}
