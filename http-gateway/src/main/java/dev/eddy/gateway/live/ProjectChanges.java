package dev.eddy.gateway.live;

import dev.eddy.gateway.streams.Scatter;
import dev.eddy.gateway.streams.QueryControl;
import dev.eddy.query.ChangeCountRead;
import dev.eddy.serde.Json;
import dev.eddy.trends.HourlyEventKey;
import io.vertx.core.Future;

/**
 * A project's change version: the sum, over every partition, of its change counter ({@link HourlyEventKey#changes}),
 * which the topology increments whenever an event enters or leaves one of the project's timelines. Counters only
 * grow, so the version differs from an earlier reading exactly when some event of the project came, moved or went
 * since: live dashboards compare it to decide whether to recalculate. Each instance reads its active partitions'
 * counters (one point read each, {@link ChangeCountRead}) through {@link Scatter}; the partials add up.
 */
public final class ProjectChanges {
    /** The partial's kind, as instances ask each other for it. */
    public static final String KIND = "changes";

    private final Scatter scatter;

    private ProjectChanges(final Scatter scatter) {
        this.scatter = scatter;
    }

    /** Registers the partial with {@code scatter} (every role: a streams-only instance answers it for the others). */
    public static ProjectChanges register(final Scatter scatter) {
        final ProjectChanges changes = new ProjectChanges(scatter);
        scatter.register(KIND, new ChangeCountRead());
        return changes;
    }

    /** The project's version now; fails (503) while partitions move, as every scattered read does. */
    public Future<Long> version(final long projectId, final QueryControl control) {
        return scatter.gather(KIND, Json.mapper().createObjectNode().put("project_id", projectId), control);
    }
}
