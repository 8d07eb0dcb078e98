package dev.eddy.persons;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/**
 * Person uuids are PostHog's: {@code uuidFromDistinctId(team, distinct_id)}, a UUIDv5 of {@code "<team>:<distinct id>"}
 * (UTF-8) in PostHog's person namespace. The expected values were computed with Python's {@code uuid.uuid5}, the
 * implementation PostHog's Django side uses, not with Eddy's code: a person keeps its uuid when its events move from
 * PostHog to Eddy.
 */
class PersonIdsTest {
    @Test
    void uuidsAreThoseOfPostHogForTheSameProjectAndDistinctId() {
        assertThat(PersonIds.personUuid(1, "anon")).isEqualTo("7318c711-4e13-553f-aa67-bd012837acb9");
        assertThat(PersonIds.personUuid(42, "user-1")).isEqualTo("450a3186-cebb-5d4f-94b3-155369e68dfb");
        assertThat(PersonIds.personUuid(2, "ü@example.com")).as("UTF-8 bytes").isEqualTo("789087cf-f118-53ea-a2b8-698671fbb2fc");
        assertThat(PersonIds.personUuid(1234567, "0190a3b2-9a9c-7c3a-8f21-2f5b7a1c9d10"))
                .isEqualTo("fac90b7d-9cbd-5850-971a-64ef88245f8a");
    }
}
