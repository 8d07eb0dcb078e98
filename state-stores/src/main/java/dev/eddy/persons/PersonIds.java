package dev.eddy.persons;

import com.fasterxml.uuid.Generators;
import com.fasterxml.uuid.impl.NameBasedGenerator;
import java.util.Locale;
import java.util.Set;
import java.util.UUID;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * Person identifiers as PostHog derives them, and the distinct ids PostHog never merges.
 *
 * <p>A person's uuid is {@code uuidv5("<project>:<distinct id>", 932979b4-65c3-4424-8467-0b66ec27bc22)} of the
 * distinct id that created it (PostHog's {@code uuidFromDistinctId}), so every instance derives the same id for
 * the same first distinct id without coordination.
 */
public final class PersonIds {
    /** PostHog's namespace for person uuids. */
    public static final UUID NAMESPACE = UUID.fromString("932979b4-65c3-4424-8467-0b66ec27bc22");

    private static final NameBasedGenerator V5 = Generators.nameBasedGenerator(NAMESPACE);

    private static final Set<String> ILLEGAL_ANY_CASE = quoted(Stream.of("anonymous", "guest", "distinctid",
            "distinct_id", "id", "not_authenticated", "email", "undefined", "true", "false"));
    private static final Set<String> ILLEGAL_EXACT = quoted(Stream.of("[object Object]", "NaN", "None", "none", "null",
            "0", "undefined"));

    private PersonIds() {
    }

    /** The uuid of the person that {@code distinctId} creates in {@code projectId}. */
    public static String personUuid(final long projectId, final String distinctId) {
        return V5.generate(projectId + ":" + distinctId).toString();
    }

    /**
     * Whether PostHog refuses to merge through this distinct id: blank, or a placeholder an SDK sends when it has
     * no real id ({@code anonymous}, {@code null}, {@code [object Object]}, ...), bare or in quotes. The listed
     * words match in any case, the listed literals only exactly, as in PostHog.
     */
    public static boolean isIllegalForMerge(final String distinctId) {
        return distinctId.isBlank()
                || ILLEGAL_ANY_CASE.contains(distinctId.toLowerCase(Locale.ROOT))
                || ILLEGAL_EXACT.contains(distinctId);
    }

    private static Set<String> quoted(final Stream<String> ids) {
        return ids.flatMap(id -> Stream.of(id, "'" + id + "'", "\"" + id + "\"")).collect(Collectors.toUnmodifiableSet());
    }
}
