package dev.eddy.events;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.eddy.serde.Json;
import dev.eddy.timelines.TimelineEvent;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import org.junit.jupiter.api.Test;

class EventListQueryTest {
    private static final UUID A = UUID.fromString("00000000-0000-0000-0000-00000000000a");
    private static final UUID B = UUID.fromString("00000000-0000-0000-0000-00000000000b");

    private static EventListQuery query(final int limit, final int offset, final boolean ascending) {
        return new EventListQuery(1, 100, 1_000, List.of(), Optional.empty(), null, null, limit, offset, ascending);
    }

    private static EventListQuery.Row row(final long micros, final UUID uuid) {
        return new EventListQuery.Row("person", new TimelineEvent(micros, uuid, "e", "d", Map.of(), "{}".getBytes()), Long.MIN_VALUE,
                Json.mapper().createObjectNode());
    }

    private static List<Long> times(final List<EventListQuery.Row> rows) {
        return rows.stream().map(r -> r.event().timeMicros()).toList();
    }

    @Test
    void aShareKeepsThePageEverythingBeforeItAndOneRowMore() {
        final EventListQuery query = query(2, 1, false);
        final EventListQuery.Top top = query.top();
        for (final long t : new long[] {300, 700, 200, 900, 500, 400}) {
            top.offer(row(t, UUID.randomUUID()));
        }
        assertThat(times(top.page().rows())).as("offset 1 + limit 2 + 1").containsExactly(900L, 700L, 500L, 400L);
        assertThat(top.wants(450)).isTrue();
        assertThat(top.wants(350)).as("older than everything kept").isFalse();
        assertThat(times(query.page(top.page()))).containsExactly(700L, 500L);
        assertThat(query.hasMore(top.page())).isTrue();
    }

    @Test
    void oldestFirstKeepsTheOldest() {
        final EventListQuery query = query(2, 0, true);
        final EventListQuery.Top top = query.top();
        for (final long t : new long[] {300, 700, 200, 900}) {
            top.offer(row(t, UUID.randomUUID()));
        }
        assertThat(times(top.page().rows())).containsExactly(200L, 300L, 700L);
        assertThat(top.wants(800)).isFalse();
        assertThat(top.wants(250)).isTrue();
    }

    @Test
    void sharesMergeInOrderCutToWhatThePageNeedsAndTiesGoByUuid() {
        final EventListQuery query = query(2, 0, false);
        final EventListQuery.Page a = new EventListQuery.Page(List.of(row(500, B), row(100, A)), false, query.kept());
        final EventListQuery.Page b = new EventListQuery.Page(List.of(row(500, A), row(300, B)), false, query.kept());
        final EventListQuery.Page merged = EventListQuery.Page.merge(a, b);
        assertThat(merged.rows()).extracting(r -> r.event().timeMicros() + " " + r.event().uuid().toString().substring(35))
                .containsExactly("500 a", "500 b", "300 b");
        assertThat(query.page(merged)).hasSize(2);
        assertThat(query.hasMore(merged)).isTrue();
        assertThat(query.hasMore(new EventListQuery.Page(List.of(row(500, A)), false, query.kept()))).isFalse();
    }

    @Test
    void theRangeExcludesBothEnds() {
        final EventListQuery query = query(1, 0, false);
        assertThat(query.inRange(100)).isFalse();
        assertThat(query.inRange(101)).isTrue();
        assertThat(query.inRange(999)).isTrue();
        assertThat(query.inRange(1_000)).isFalse();
    }

    @Test
    void aQueryTravelsAsItsRequest() {
        final EventListQuery query = new EventListQuery(7, Long.MIN_VALUE, 5_000, List.of("paid"), Optional.of(A),
                Json.mapper().createObjectNode().put("type", "AND"), Json.mapper().createObjectNode().put("id", 3), 10, 20, true);
        assertThat(EventListQuery.fromRequest(query.toRequest())).isEqualTo(query);
        assertThatThrownBy(() -> EventListQuery.fromRequest(Json.mapper().createObjectNode().put("project_id", 1)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("'after'");
    }
}
