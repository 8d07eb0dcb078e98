package dev.eddy.query.insights;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import dev.eddy.events.EventListQuery;
import dev.eddy.query.InvalidQuery;
import dev.eddy.serde.Json;
import dev.eddy.timelines.TimelineEvent;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/** An events list's share travels between instances intact, and merges in the query's order. */
class EventListReadTest {
    private final EventListRead read = new EventListRead();
    private final EventListQuery query = new EventListQuery(1, Long.MIN_VALUE, Long.MAX_VALUE, List.of(), Optional.empty(), null, null, 2, 0,
            false);
    private final JsonNode request = query.toRequest();

    @Test
    void aShareIsDecodedAsItWasEncoded() {
        final EventListQuery.Row known = new EventListQuery.Row(UUID.randomUUID().toString(), new TimelineEvent(2_000, UUID.randomUUID(),
                "$pageview", "d1", Map.of(0, "acme"), "{\"$browser\":\"Chrome\"}".getBytes(StandardCharsets.UTF_8)), 1_000,
                Json.mapper().createObjectNode().put("email", "a@example.com"));
        final EventListQuery.Row unknown = new EventListQuery.Row("not-a-uuid", new TimelineEvent(1_500, UUID.randomUUID(), "paid", "d2",
                Map.of(), "{}".getBytes(StandardCharsets.UTF_8)), Long.MIN_VALUE, Json.mapper().createObjectNode());
        final EventListQuery.Page page = new EventListQuery.Page(List.of(known, unknown), false, query.kept());

        final EventListQuery.Page decoded = read.decode(request, read.encode(page));
        assertThat(decoded.rows()).hasSize(2);
        assertThat(decoded.rows().get(0).person()).isEqualTo(known.person());
        assertThat(decoded.rows().get(0).event()).isEqualTo(known.event());
        assertThat(decoded.rows().get(0).personCreatedAtMicros()).isEqualTo(1_000);
        assertThat(decoded.rows().get(0).personProperties()).isEqualTo(known.personProperties());
        assertThat(decoded.rows().get(1).person()).isEqualTo("not-a-uuid");
        assertThat(decoded.rows().get(1).personCreatedAtMicros()).isEqualTo(Long.MIN_VALUE);
        assertThat(decoded.kept()).isEqualTo(3);
    }

    @Test
    void sharesMergeNewestFirst() {
        final EventListQuery.Page a = new EventListQuery.Page(List.of(row(9), row(3)), false, query.kept());
        final EventListQuery.Page b = new EventListQuery.Page(List.of(row(7), row(5), row(1)), false, query.kept());
        assertThat(read.merge(a, b).rows()).extracting(r -> r.event().timeMicros()).containsExactly(9L, 7L, 5L);
    }

    @Test
    void aTruncatedShareIsRefused() {
        final byte[] bytes = read.encode(new EventListQuery.Page(List.of(row(9)), false, query.kept()));
        assertThatThrownBy(() -> read.decode(request, java.util.Arrays.copyOf(bytes, bytes.length - 3)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("events partial");
        assertThatThrownBy(() -> read.decode(Json.mapper().createObjectNode(), bytes)).isInstanceOf(InvalidQuery.class);
    }

    private static EventListQuery.Row row(final long micros) {
        return new EventListQuery.Row(UUID.randomUUID().toString(), new TimelineEvent(micros, UUID.randomUUID(), "e", "d", Map.of(),
                new byte[] {'{', '}'}), Long.MIN_VALUE, Json.mapper().createObjectNode());
    }
}
