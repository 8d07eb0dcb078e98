package dev.eddy.config;

import com.typesafe.config.Config;
import java.nio.file.Path;
import java.time.Duration;

/**
 * The Kafka Streams instance of one process.
 *
 * @param applicationId    shared by every instance of one deployment (prefixed with kafka.topic-prefix)
 * @param stateDir         this instance's RocksDB directory
 * @param threads          stream threads in this instance; 0 sizes them to the cores ({@link #threadsFor})
 * @param commitIntervalMs exactly-once commit interval
 * @param standbyReplicas  warm store copies kept on other instances
 * @param dedup            how long processed event uuids are remembered
 * @param timelineRetention how long an event stays in the timelines and rollups after Eddy received it; zero keeps
 *                          events forever
 * @param rocksdbMemoryBytes off-heap memory shared by every RocksDB store of the process (block cache, index and
 *                          filter blocks, memtables); zero leaves each store RocksDB's and Kafka Streams' own defaults
 */
public record StreamsConfig(String applicationId, Path stateDir, int threads, long commitIntervalMs, int standbyReplicas,
                            Dedup dedup, Duration timelineRetention, long rocksdbMemoryBytes) {

    /**
     * De-duplication by event uuid: an event whose uuid was processed within this long (measured from when the
     * gateway received the first copy) has no second effect.
     *
     * @param retention           for live events
     * @param historicalRetention for events of historical migrations, which are replayed over longer spans
     */
    public record Dedup(Duration retention, Duration historicalRetention) {
        public Dedup {
            Validation.require(retention.toMinutes() >= 1, "streams.dedup.retention must be at least a minute");
            Validation.require(historicalRetention.toMinutes() >= 1,
                    "streams.dedup.historical-retention must be at least a minute");
        }
    }

    public StreamsConfig {
        Validation.require(applicationId.matches("[A-Za-z0-9._-]+"),
                "streams.application-id may hold only letters, digits, '.', '_' and '-'");
        Validation.require(threads >= 0 && threads <= 64, "streams.threads must be 0 (one per core) to 64, got " + threads);
        Validation.require(commitIntervalMs >= 1, "streams.commit-interval-ms must be positive");
        Validation.require(standbyReplicas >= 0, "streams.standby-replicas must not be negative");
        Validation.require(timelineRetention.isZero() || timelineRetention.toHours() >= 24,
                "streams.timeline-retention must be 0 (forever) or at least a day");
        Validation.require(rocksdbMemoryBytes == 0 || rocksdbMemoryBytes >= 16L * 1024 * 1024,
                "streams.rocksdb-memory must be 0 (RocksDB's defaults per store) or at least 16 MiB");
    }

    /**
     * The stream threads to run: {@link #threads} when set, else one per core for an instance of role
     * {@link Role#STREAMS}, and one fewer (at least one) for {@link Role#ALL}, whose HTTP routes and query scans need
     * a core (a stream thread uses one core at most).
     */
    public int threadsFor(final Role role, final int cores) {
        if (threads > 0) {
            return threads;
        }
        return Math.min(64, Math.max(1, role == Role.STREAMS ? cores : cores - 1));
    }

    static StreamsConfig from(final Config root) {
        final Config c = root.getConfig("streams");
        return new StreamsConfig(
                c.getString("application-id"),
                Path.of(root.getString("state-dir")),
                c.getInt("threads"),
                c.getLong("commit-interval-ms"),
                c.getInt("standby-replicas"),
                new Dedup(c.getDuration("dedup.retention"), c.getDuration("dedup.historical-retention")),
                c.getDuration("timeline-retention"),
                c.getBytes("rocksdb-memory"));
    }
}
