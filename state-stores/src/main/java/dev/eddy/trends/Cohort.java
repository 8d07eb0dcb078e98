package dev.eddy.trends;

import com.fasterxml.jackson.databind.JsonNode;
import java.time.Instant;
import java.util.HashSet;
import java.util.Set;

/**
 * A PostHog cohort as queries and flags ask whether a person is in it. A static cohort is a list of members (distinct
 * ids: a person is in it when any of its distinct ids is, so members stay members when persons merge); a dynamic one
 * is its {@code filters.properties}, groups of person property filters (each may be negated) and other cohorts,
 * evaluated on the person's current properties, so membership follows every change of a person as it happens. The
 * gateway sends a cohort inlined ({@link #INLINED}: {@code {id, name, is_static, filters, members}}, nested cohorts
 * inlined the same way), so every instance decides with the same definition.
 */
public final class Cohort {
    /** The key of a cohort filter ({@code {"key": "id", "type": "cohort", "value": 5}}) under which its definition is inlined. */
    public static final String INLINED = "eddy_cohort";

    private final long id;
    private final Set<String> members;
    private final PropertyFilter persons;
    private final String definition;

    private Cohort(final long id, final Set<String> members, final PropertyFilter persons, final String definition) {
        this.id = id;
        this.members = members;
        this.persons = persons;
        this.definition = definition;
    }

    /**
     * The cohort a filter names, from its inlined definition.
     *
     * @throws IllegalArgumentException {@code Cohort ID 5 does not exist!} when it has none
     */
    public static Cohort ofFilter(final JsonNode filter) {
        final JsonNode definition = filter.get(INLINED);
        if (definition == null || !definition.isObject()) {
            throw new IllegalArgumentException("Cohort ID " + filter.path("value").asText() + " does not exist!");
        }
        return parse(definition);
    }

    /**
     * @param definition {@code {id, is_static, filters: {properties: group}, members: [distinct ids]}}
     * @throws IllegalArgumentException naming what is wrong with it
     */
    public static Cohort parse(final JsonNode definition) {
        if (!definition.path("id").canConvertToLong()) {
            throw new IllegalArgumentException("a cohort needs a numeric id");
        }
        final long id = definition.get("id").asLong();
        if (definition.path("is_static").asBoolean(false)) {
            final Set<String> members = new HashSet<>();
            definition.path("members").forEach(m -> members.add(m.asText()));
            return new Cohort(id, members, null, definition.toString());
        }
        final JsonNode properties = definition.path("filters").path("properties");
        final PropertyFilter persons = properties.isMissingNode() || properties.isNull() || properties.isEmpty()
                ? PropertyFilter.NONE : PropertyFilter.ofPersons(properties);
        return new Cohort(id, null, persons, definition.toString());
    }

    public long id() {
        return id;
    }

    public boolean isStatic() {
        return members != null;
    }

    /** Whether the person {@code source} answers for ({@link PropertyFilter.Source#person}, its distinct ids) is in the cohort. */
    public boolean contains(final PropertyFilter.Source source, final Instant now) {
        if (members != null) {
            for (final String distinctId : source.personDistinctIds()) {
                if (members.contains(distinctId)) {
                    return true;
                }
            }
            return false;
        }
        return persons.test(source, now);
    }

    /** The definition as inlined: equal texts for equal cohorts. */
    @Override
    public String toString() {
        return definition;
    }
}
