package dev.eddy.groups;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.eddy.persons.PersonSerdes;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import org.apache.kafka.common.errors.SerializationException;
import org.apache.kafka.common.serialization.Serde;
import org.junit.jupiter.api.Test;

class GroupSetTest {
    private final Serde<GroupSet> serde = PersonSerdes.groupSet();

    @Test
    void aGroupSetSurvivesItsTopic() {
        final GroupSet set = new GroupSet(7, 1, "company", "acme", dev.eddy.serde.Json.mapper().createObjectNode().put("size", "big"),
                Instant.parse("2026-11-23T07:00:00Z"));
        assertThat(serde.deserializer().deserialize("t", serde.serializer().serialize("t", set))).isEqualTo(set);
    }

    @Test
    void aRecordOfAnotherShapeIsUnreadable() {
        // Read as a group set with every field missing, it would reach the groups processor (and be stored as a group).
        for (final String other : new String[] {"{\"poison\":1,\"properties\":[1,2]}", "{}",
                "{\"project_id\":7,\"group_type_index\":9,\"group_type\":\"x\",\"group_key\":\"k\",\"set\":{},\"timestamp\":\"2026-11-23T07:00:00Z\"}",
                "{\"project_id\":7,\"group_type_index\":0,\"group_type\":\"x\",\"set\":{},\"timestamp\":\"2026-11-23T07:00:00Z\"}"}) {
            assertThatThrownBy(() -> serde.deserializer().deserialize("t", other.getBytes(StandardCharsets.UTF_8)))
                    .as(other).isInstanceOf(SerializationException.class);
        }
    }
}
