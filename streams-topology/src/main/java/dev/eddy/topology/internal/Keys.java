package dev.eddy.topology.internal;

/** The keys of Eddy's topology topics and stores, built in one place. */
public final class Keys {
    private Keys() {
    }

    /** Partitioning key of everything about one distinct id: the ingest topics' {@code token:distinct_id}. */
    public static String distinctIdRoute(final String token, final String distinctId) {
        return token + ":" + distinctId;
    }

    /** Store key of one distinct id, and of one person: {@code project:id}. */
    public static String scoped(final long projectId, final String id) {
        return projectId + ":" + id;
    }

    /** Key of everything one project's coordinator decides. */
    public static String project(final long projectId) {
        return Long.toString(projectId);
    }
}
