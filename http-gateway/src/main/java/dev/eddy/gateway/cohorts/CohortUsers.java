package dev.eddy.gateway.cohorts;

import io.vertx.core.Future;
import java.util.List;

/** What uses a cohort and keeps it from being deleted: the active feature flags naming it (PostHog's rule). */
@FunctionalInterface
public interface CohortUsers {
    /** The keys of the project's active flags whose conditions name cohort {@code cohortId}. */
    Future<List<String>> activeFlagsUsing(long projectId, long cohortId);
}
