package dev.eddy.gateway.ops;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.turbo.TurboFilter;
import ch.qos.logback.core.spi.FilterReply;
import java.util.List;
import org.slf4j.Marker;

/**
 * Drops the Kafka warnings that say nothing an operator can act on, by their message format, so a start-up
 * (whose banner prints the keys) is not buried under a hundred of them. Every other warning of the same loggers
 * still passes. Installed as a logback turbo filter in {@code logback.xml}.
 *
 * <ul>
 *   <li>{@code Unable to assign 1 of 1 standby tasks for task [..]}: one line per task (60 at 12 partitions) at every
 *       rebalance of a group with fewer instances than {@code streams.standby-replicas} + 1, including the usual
 *       single local instance. {@code StreamsApp} logs one line per rebalance about standby copies instead.</li>
 *   <li>{@code Not updating last stable offset for partition .. as it is no longer assigned}: the global stores'
 *       consumer, restoring one topic after another, drops an offset answer for a topic it has finished; one line
 *       per partition at every start.</li>
 *   <li>{@code Processing exception handler is not enabled for the GlobalThread}: Eddy enables it
 *       ({@code StreamsProperties}); Kafka Streams prints this from configuration copies it makes for its clients,
 *       which leave the setting out.</li>
 * </ul>
 */
public final class KnownKafkaNoise extends TurboFilter {
    /**
     * Each message as its fixed parts, in order: Kafka's clients sometimes pass the format with its {@code {}}
     * placeholders, sometimes the message already formatted, and put their own prefix before it.
     */
    private static final List<List<String>> MESSAGES = List.of(
            List.of("Unable to assign ", " of ", " standby tasks for task ["),
            List.of("Not updating last stable offset for partition ", " as it is no longer assigned"),
            List.of("Processing exception handler is not enabled for the GlobalThread"));

    @Override
    public FilterReply decide(final Marker marker, final Logger logger, final Level level, final String format,
                              final Object[] params, final Throwable t) {
        return noise(logger == null ? null : logger.getName(), level, format) ? FilterReply.DENY : FilterReply.NEUTRAL;
    }

    /** Whether a line is one of the known, unactionable Kafka warnings. */
    static boolean noise(final String logger, final Level level, final String format) {
        if (format == null || logger == null || level != Level.WARN || !logger.startsWith("org.apache.kafka.")) {
            return false;
        }
        for (final List<String> parts : MESSAGES) {
            if (containsInOrder(format, parts)) {
                return true;
            }
        }
        return false;
    }

    private static boolean containsInOrder(final String text, final List<String> parts) {
        int from = 0;
        for (final String part : parts) {
            final int at = text.indexOf(part, from);
            if (at < 0) {
                return false;
            }
            from = at + part.length();
        }
        return true;
    }
}
