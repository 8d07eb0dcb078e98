package dev.eddy.topology.internal;

import java.util.HashMap;
import java.util.Map;
import org.apache.kafka.common.MetricName;
import org.apache.kafka.common.metrics.Sensor;
import org.apache.kafka.common.metrics.stats.CumulativeCount;
import org.apache.kafka.streams.processor.api.ProcessorContext;

/**
 * Counts the ingestion warnings of one processor (PostHog's names: a merge refused, an event dropped), as Kafka
 * Streams metrics {@code eddy-ingestion / warnings-total{reason, processor, task-id}}, which {@code /metrics}
 * exports with the other Streams metrics. Bad data is counted, never thrown.
 */
public final class Warnings {
    private static final String GROUP = "eddy-ingestion";

    private final ProcessorContext<?, ?> context;
    private final String processor;
    private final Map<String, Sensor> sensors = new HashMap<>();

    public Warnings(final ProcessorContext<?, ?> context, final String processor) {
        this.context = context;
        this.processor = processor;
    }

    public void record(final String reason) {
        sensors.computeIfAbsent(reason, this::sensor).record();
    }

    private Sensor sensor(final String reason) {
        final String task = context.taskId().toString();
        final Sensor sensor = context.metrics().addSensor(GROUP + "." + processor + "." + reason + "." + task,
                Sensor.RecordingLevel.INFO);
        final MetricName name = new MetricName("warnings-total", GROUP, "Events or merges PostHog's rules refuse",
                Map.of("reason", reason, "processor", processor, "task-id", task));
        if (!sensor.hasMetrics()) {
            sensor.add(name, new CumulativeCount());
        }
        return sensor;
    }
}
