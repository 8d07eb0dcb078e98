package dev.eddy.persons;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.eddy.events.CapturedEvent;
import dev.eddy.serde.Json;

import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.apache.kafka.common.errors.SerializationException;
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

    @Test
    void anEventsApplyRoundTripsInBinaryWithItsPropertiesJson() {
        final CapturedEvent event = event("{\"$current_url\":\"/p\",\"n\":1.5,\"$set\":{\"plan\":\"pro\"},\"$unset\":[\"x\"]}");
        final PersonCommand.Apply apply = PersonCommand.Apply.of(event, "0b7f6e1c-4e0b-5d3a-9a8e-2f1d3c4b5a69", Map.of("0", "acme"));
        final byte[] bytes = PersonSerdes.personCommand().serializer().serialize("persons.commands", apply);

        assertThat(bytes[0]).as("binary, not JSON").isEqualTo((byte) PersonCommandSerde.APPLY);
        final PersonCommand read = PersonSerdes.personCommand().deserializer().deserialize("persons.commands", bytes);
        assertThat(read).isEqualTo(apply);
        assertThat(new String(((PersonCommand.Apply) read).properties(), StandardCharsets.UTF_8))
                .isEqualTo("{\"$current_url\":\"/p\",\"n\":1.5,\"$set\":{\"plan\":\"pro\"},\"$unset\":[\"x\"]}");
        assertThat(((PersonCommand.Apply) read).updates()).hasToString("{\"$set\":{\"plan\":\"pro\"},\"$unset\":[\"x\"]}");
        assertThat(PersonCommand.Apply.of(event("{\"k\":1}"), "p", Map.of()).updates()).as("no updates").isNull();
    }

    @Test
    void anApplyWrittenByVersionOneAsJsonIsStillRead() {
        final String previous = "{\"type\":\"apply\",\"event\":{\"v\":1,\"uuid\":\"01890a5d-ac96-774b-bcce-3a3fcd2c6f7e\","
                + "\"project_id\":1,\"token\":\"phc_x\",\"distinct_id\":\"anon\",\"event\":\"$pageview\","
                + "\"properties\":{\"$set_once\":{\"first\":\"/a\"},\"$group_0\":\"acme\"},\"timestamp\":\"2026-11-27T10:00:00Z\","
                + "\"now\":\"2026-11-27T10:00:01Z\"},\"person_id\":\"p\",\"groups\":{\"0\":\"acme\"}}";
        final PersonCommand read = PersonSerdes.personCommand().deserializer()
                .deserialize("persons.commands", previous.getBytes(StandardCharsets.UTF_8));

        assertThat(read).isEqualTo(new PersonCommand.Apply(1, "phc_x", "p", "01890a5d-ac96-774b-bcce-3a3fcd2c6f7e", "anon",
                "$pageview", AT, Map.of("0", "acme"),
                "{\"$set_once\":{\"first\":\"/a\"},\"$group_0\":\"acme\"}".getBytes(StandardCharsets.UTF_8),
                (ObjectNode) Json.mapper().createObjectNode().set("$set_once", Json.mapper().createObjectNode().put("first", "/a"))));
    }

    @Test
    void aTruncatedApplyIsRefusedAsUnreadable() {
        final byte[] bytes = PersonSerdes.personCommand().serializer().serialize("persons.commands",
                PersonCommand.Apply.of(event("{}"), "p", Map.of()));
        assertThatThrownBy(() -> PersonSerdes.personCommand().deserializer().deserialize("persons.commands",
                Arrays.copyOf(bytes, bytes.length - 3))).isInstanceOf(SerializationException.class);
    }

    private static CapturedEvent event(final String properties) {
        try {
            return new CapturedEvent(1, "01890a5d-ac96-774b-bcce-3a3fcd2c6f7e", 1, "phc_x", "anon", "$pageview",
                    (ObjectNode) Json.mapper().readTree(properties), AT, AT.plusSeconds(1), null, null, null, null);
        } catch (final java.io.IOException e) {
            throw new IllegalArgumentException(e);
        }
    }
}
