package dev.eddy.persons;

import com.fasterxml.jackson.databind.JsonNode;
import dev.eddy.trends.Cohort;
import dev.eddy.trends.PropertyFilter;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Optional;

/**
 * The persons list of PostHog's persons API over one project's persons: merged-away persons left out, an
 * optional {@code search} (a case-insensitive part of the {@code email} or {@code name} property, or an exact
 * distinct id), newest first, then one page.
 *
 * @param search what to look for, if anything
 * @param limit  page size
 * @param offset index of the page's first person
 * @param cohort only the persons in this cohort ({@link Cohort}'s inlined definition), if given
 */
public record PersonQuery(Optional<String> search, int limit, int offset, Optional<JsonNode> cohort) {
    /** Every person (matching {@code search}). */
    public PersonQuery(final Optional<String> search, final int limit, final int offset) {
        this(search, limit, offset, Optional.empty());
    }

    private static final Comparator<PersonState> NEWEST_FIRST = Comparator
            .comparing(PersonState::createdAt, Comparator.nullsLast(Comparator.reverseOrder()))
            .thenComparing(PersonState::uuid);

    /**
     * @param count   persons matching, over every page
     * @param results this page
     */
    public record Page(long count, List<PersonState> results) {
    }

    public Page run(final Iterable<PersonState> persons) {
        return page(top(persons));
    }

    /**
     * Some of the persons' share of the answer: how many match, and the first {@code offset + limit} matches, newest
     * first (no page can hold others). Shares of disjoint persons {@link #merge}; {@link #page} cuts the page.
     */
    public Page top(final Iterable<PersonState> persons) {
        final Optional<String> needle = search.map(String::trim).filter(s -> !s.isEmpty());
        final Optional<Cohort> in = cohort.map(Cohort::parse);
        final java.time.Instant now = java.time.Instant.now();
        final List<PersonState> matching = new ArrayList<>();
        for (final PersonState person : persons) {
            if (person.mergedInto() == null && needle.map(n -> matches(person, n)).orElse(true)
                    && in.map(c -> c.contains(PropertyFilter.Source.ofPerson(person.properties(), person.distinctIds()), now)).orElse(true)) {
                matching.add(person);
            }
        }
        matching.sort(NEWEST_FIRST);
        return new Page(matching.size(), List.copyOf(matching.subList(0, (int) Math.min((long) offset + limit, matching.size()))));
    }

    /** Two shares of disjoint persons as one: the counts add, the persons merge in order. */
    public static Page merge(final Page a, final Page b) {
        final List<PersonState> both = new ArrayList<>(a.results());
        both.addAll(b.results());
        both.sort(NEWEST_FIRST);
        return new Page(a.count() + b.count(), List.copyOf(both));
    }

    /** This query's page of the whole: {@code limit} persons from {@code offset}. */
    public Page page(final Page whole) {
        final int from = Math.min(offset, whole.results().size());
        final int to = (int) Math.min((long) from + limit, whole.results().size());
        return new Page(whole.count(), List.copyOf(whole.results().subList(from, to)));
    }

    private static boolean matches(final PersonState person, final String needle) {
        if (person.distinctIds().contains(needle)) {
            return true;
        }
        final String lower = needle.toLowerCase(Locale.ROOT);
        for (final String field : new String[] {"email", "name"}) {
            final JsonNode value = person.properties().get(field);
            if (value != null && value.isValueNode() && value.asText().toLowerCase(Locale.ROOT).contains(lower)) {
                return true;
            }
        }
        return false;
    }
}
