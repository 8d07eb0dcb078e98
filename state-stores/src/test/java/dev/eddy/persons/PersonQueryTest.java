package dev.eddy.persons;

import static org.assertj.core.api.Assertions.assertThat;

import dev.eddy.serde.Json;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** Persons pages newest first, whole or gathered from the shares of several instances. */
class PersonQueryTest {
    @Test
    void sharesOfSeveralInstancesGiveTheSamePageAsTheWhole() {
        final List<PersonState> everyone = new ArrayList<>();
        for (int i = 0; i < 23; i++) {
            everyone.add(person(i, i % 5 == 0 ? "merged" : null));
        }
        for (final int offset : new int[] {0, 3, 15, 30}) {
            final PersonQuery query = new PersonQuery(Optional.empty(), 5, offset);
            final PersonQuery.Page whole = query.run(everyone);
            // Three instances, each with every third person.
            PersonQuery.Page gathered = null;
            for (int share = 0; share < 3; share++) {
                final List<PersonState> mine = new ArrayList<>();
                for (int i = share; i < everyone.size(); i += 3) {
                    mine.add(everyone.get(i));
                }
                final PersonQuery.Page partial = query.top(mine);
                assertThat(partial.results().size()).isLessThanOrEqualTo(offset + 5);
                gathered = gathered == null ? partial : PersonQuery.merge(gathered, partial);
            }
            assertThat(query.page(gathered)).as("offset " + offset).isEqualTo(whole);
        }
        final PersonQuery.Page first = new PersonQuery(Optional.empty(), 5, 0).run(everyone);
        // 23 persons, 5 of them merged away; the newest (created last) first.
        assertThat(first.count()).isEqualTo(18);
        assertThat(first.results()).extracting(PersonState::uuid).containsExactly("p22", "p21", "p19", "p18", "p17");
    }

    private static PersonState person(final int i, final String mergedInto) {
        return new PersonState("p" + (i < 10 ? "0" : "") + i, 1, "phc_t", Instant.parse("2026-01-01T00:00:00Z").plusSeconds(i), false,
                Json.mapper().createObjectNode(), List.of("d" + i), 1, mergedInto);
    }
}
