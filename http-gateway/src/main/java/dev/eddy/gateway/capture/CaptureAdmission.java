package dev.eddy.gateway.capture;

import dev.eddy.config.CaptureConfig;
import dev.eddy.topology.EddyTopics;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.Collectors;

/**
 * Which of a request's events are kept, and where each goes: events PostHog does not ingest are dropped and counted by
 * reason ({@code eddy.capture.events.dropped}); a historical batch goes to {@code events.historical}, keyed; otherwise
 * the first events of a key within its rate ({@code capture.overflow.*}) go to {@code events.ingest}, keyed and in
 * order, and the rest to {@code events.overflow}, unkeyed. Written records are counted by topic
 * ({@code eddy.capture.events}). No HTTP here: {@link CaptureRoutes} authenticates and answers.
 */
final class CaptureAdmission {
    private final EddyTopics topics;
    private final OverflowLimiter overflow;
    private final MeterRegistry registry;
    private final Map<String, Counter> produced = new ConcurrentHashMap<>();
    private final Map<String, Counter> dropped = new ConcurrentHashMap<>();

    CaptureAdmission(final EddyTopics topics, final CaptureConfig.Overflow overflow, final MeterRegistry registry) {
        this.topics = topics;
        this.overflow = new OverflowLimiter(overflow);
        this.registry = registry;
    }

    /** The records to write for {@code request}'s events, in the request's order. */
    List<EventProducer.Outgoing> admit(final CaptureRequest request, final EventBuilder.RequestContext context) {
        final List<EventBuilder.Accepted> events = new ArrayList<>(request.events().size());
        for (final CaptureRequest.RawEvent raw : request.events()) {
            final EventBuilder.Built built = EventBuilder.build(raw, context);
            if (built instanceof EventBuilder.Accepted accepted) {
                events.add(accepted);
            } else {
                counter(dropped, "eddy.capture.events.dropped", "reason", ((EventBuilder.Dropped) built).reason()).increment();
            }
        }
        final List<EventProducer.Outgoing> records = new ArrayList<>(events.size());
        if (request.historical()) {
            events.forEach(e -> records.add(EventProducer.record(topics.historical().name(), e.event().partitionKey(),
                    e.event(), e.rawProperties())));
        } else {
            final Map<String, Long> perKey = new HashMap<>();
            final List<String> keys = events.stream().map(e -> e.event().partitionKey()).toList();
            keys.forEach(key -> perKey.merge(key, 1L, Long::sum));
            perKey.replaceAll(overflow::admit);
            for (int i = 0; i < events.size(); i++) {
                final EventBuilder.Accepted e = events.get(i);
                final String key = keys.get(i);
                final boolean live = perKey.merge(key, -1L, Long::sum) >= 0;
                records.add(live
                        ? EventProducer.record(topics.ingest().name(), key, e.event(), e.rawProperties())
                        : EventProducer.record(topics.overflow().name(), null, e.event(), e.rawProperties()));
            }
        }
        records.stream().collect(Collectors.groupingBy(EventProducer.Outgoing::topic, Collectors.counting()))
                .forEach((topic, n) -> counter(produced, "eddy.capture.events", "topic", topic).increment(n));
        return records;
    }

    private Counter counter(final Map<String, Counter> counters, final String name, final String tag, final String value) {
        return counters.computeIfAbsent(value, v -> Counter.builder(name).tag(tag, v).register(registry));
    }
}
