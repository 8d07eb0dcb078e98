package dev.eddy.persons;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The person and identity commands on their topics: what a previous version wrote is still read. */
class PersonCommandSerdeTest {
    private static final Instant AT = Instant.parse("2026-11-27T10:00:00Z");

    @Test
    void aMergeWrittenBeforeHoldsReadsAsOneThatReleasesNothing() {
        final String previous = "{\"type\":\"merge-into\",\"project_id\":1,\"person_id\":\"a\",\"target\":\"b\","
                + "\"source_wins\":true,\"timestamp\":\"2026-11-27T10:00:00Z\"}";
        final PersonCommand read = PersonSerdes.personCommand().deserializer()
                .deserialize("persons.commands", previous.getBytes(StandardCharsets.UTF_8));
        assertThat(read).isEqualTo(new PersonCommand.MergeInto(1, "a", "b", AT, null));
    }

    @Test
    void commandsCarryingTheirHeldDistinctIdsRoundTrip() {
        final PersonCommand.Held held = new PersonCommand.Held("phc_x", List.of("user", "anon"));
        for (final PersonCommand command : List.of(new PersonCommand.MergeInto(1, "a", "b", AT, held),
                new PersonCommand.AddDistinctId(1, "phc_x", "b", "anon", "b", AT, held),
                new PersonCommand.MarkIdentified(1, "b", AT, held))) {
            final byte[] bytes = PersonSerdes.personCommand().serializer().serialize("persons.commands", command);
            assertThat(PersonSerdes.personCommand().deserializer().deserialize("persons.commands", bytes)).isEqualTo(command);
        }
        final IdentityCommand release = new IdentityCommand.Release(1, "user");
        final byte[] bytes = PersonSerdes.identityCommand().serializer().serialize("identity.commands", release);
        assertThat(PersonSerdes.identityCommand().deserializer().deserialize("identity.commands", bytes)).isEqualTo(release);
    }
}
