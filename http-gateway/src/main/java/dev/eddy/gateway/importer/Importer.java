package dev.eddy.gateway.importer;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.eddy.serde.Json;
import java.io.BufferedWriter;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Replays a PostHog export into a project through {@code /batch/} with {@code historical_migration}: Eddy routes such
 * batches to {@code events.historical}, processed in order per distinct id. Batches go one after another (a distinct
 * id's events must not overtake each other), read ahead on another thread; after each acknowledged batch the
 * {@link Checkpoint} moves on, so an import stopped in any way resumes where Eddy's acknowledgements ended, without
 * duplicates (events keep their uuids, which Eddy de-duplicates).
 *
 * <p>A record that is not an event is set aside in the rejects file with its line and reason; a batch Eddy refuses
 * ({@code 400}) is halved until the refused events are found, which are set aside the same way. Eddy unavailable
 * ({@code 429}, {@code 5xx}, no connection) is retried with backoff, honouring {@code Retry-After}, up to
 * {@link Options#giveUp}.
 */
final class Importer {
    /** Largest request body: well under Eddy's default {@code capture.max-batch-body-bytes} (20 MiB). */
    private static final int MAX_BATCH_BYTES = 8 << 20;
    private static final List<ExportReader.Entry> END = List.of();

    /**
     * @param personalKey a personal API key with {@code insight:read}, to watch events become visible (optional)
     * @param projectId   the project of {@code token}, for those reads
     * @param giveUp      how long Eddy may refuse a batch with retryable errors before the import stops
     * @param settle      how long to wait at the end for more events to become visible
     */
    record Options(Path file, URI host, String token, Optional<String> personalKey, Optional<Long> projectId,
                   Path state, int batchSize, boolean restart, Duration giveUp, Duration settle) {
    }

    /** What the import did, this run. */
    record Summary(long records, long resumedAfter, long imported, long rejected, long visible, boolean interrupted,
                   Duration sending, Duration total) {
    }

    /** Stops the import: not retryable, or the file is not what the checkpoint says. */
    static final class ImportException extends RuntimeException {
        ImportException(final String message) {
            super(message);
        }
    }

    private final Options options;
    private final PrintStream out;
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();
    private final Progress progress;
    private final Map<String, Long> rejectedByReason = new TreeMap<>();
    private volatile boolean stopping;

    Importer(final Options options, final PrintStream out) {
        this.options = options;
        this.out = out;
        this.progress = new Progress(out);
    }

    /** Asks a running import to stop after the batch in flight, keeping its checkpoint. */
    void stop() {
        stopping = true;
    }

    boolean stopRequested() {
        return stopping;
    }

    Summary run() throws IOException, InterruptedException {
        final long started = System.nanoTime();
        final String identity = Checkpoint.identity(options.file());
        Checkpoint checkpoint = Checkpoint.load(options.state()).filter(c -> !options.restart()).orElse(null);
        if (checkpoint != null && (!checkpoint.file().equals(identity) || !checkpoint.token().equals(options.token()))) {
            throw new ImportException("the checkpoint " + options.state() + " is of another file or project; remove it or "
                    + "pass --restart to import this file from its start");
        }
        if (checkpoint == null) {
            checkpoint = Checkpoint.start(identity, options.token());
        }
        final long resumedAfter = checkpoint.acknowledged();
        final Optional<Long> baseline = visibleEvents();
        progress.begin(resumedAfter, baseline);
        final Thread counter = start("import-counter", () -> {
            try {
                progress.total(ExportReader.count(options.file()));
            } catch (final IOException | RuntimeException e) {
                progress.total(-1);
            }
        });
        final Thread watcher = start("import-progress", () -> {
            while (!Thread.currentThread().isInterrupted()) {
                if (baseline.isPresent()) {
                    visibleEvents().ifPresent(progress::visible);
                }
                progress.render(false);
                try {
                    Thread.sleep(1000);
                } catch (final InterruptedException e) {
                    return;
                }
            }
        });

        final BlockingQueue<List<ExportReader.Entry>> batches = new ArrayBlockingQueue<>(4);
        final AtomicReference<String> readError = new AtomicReference<>();
        final Thread reader = start("import-reader", () -> {
            try (ExportReader entries = ExportReader.open(options.file(), identity)) {
                read(entries, resumedAfter, batches);
            } catch (final IOException | RuntimeException e) {
                readError.set(e.toString());
            } catch (final InterruptedException e) {
                return;
            }
            try {
                batches.put(END);
            } catch (final InterruptedException e) {
                // The import stopped taking batches.
            }
        });

        final long sendingStarted = System.nanoTime();
        boolean interrupted = false;
        try (BufferedWriter rejects = Files.newBufferedWriter(rejectsFile(), StandardCharsets.UTF_8,
                StandardOpenOption.CREATE, StandardOpenOption.APPEND)) {
            for (List<ExportReader.Entry> batch = batches.take(); batch != END; batch = batches.take()) {
                if (stopping) {
                    interrupted = true;
                    break;
                }
                final List<ExportReader.Entry> refused = new ArrayList<>();
                final long events = send(batch, refused);
                for (final ExportReader.Entry entry : refused) {
                    final ObjectNode line = Json.mapper().createObjectNode().put("line", entry.line()).put("reason", entry.rejection())
                            .put("record", entry.raw());
                    rejects.write(Json.mapper().writeValueAsString(line));
                    rejects.newLine();
                    rejectedByReason.merge(reasonKind(entry.rejection()), 1L, Long::sum);
                }
                rejects.flush();
                checkpoint = checkpoint.advanced(batch.size(), events, refused.size());
                checkpoint.save(options.state());
                progress.acknowledged(batch.size(), events, refused.size());
                progress.render(false);
            }
        } finally {
            reader.interrupt();
            counter.join(1000);
        }
        if (readError.get() != null) {
            throw new ImportException("reading " + options.file() + " failed after record " + checkpoint.acknowledged()
                    + ": " + readError.get() + " (the checkpoint is saved)");
        }
        final Duration sending = Duration.ofNanos(System.nanoTime() - sendingStarted);
        long visible = 0;
        if (baseline.isPresent()) {
            visible = awaitVisible(baseline.get(), progress.importedThisRun(), interrupted);
        }
        watcher.interrupt();
        progress.render(true);
        return new Summary(checkpoint.acknowledged(), resumedAfter, progress.importedThisRun(), progress.rejectedThisRun(),
                visible, interrupted, sending, Duration.ofNanos(System.nanoTime() - started));
    }

    private static Thread start(final String name, final Runnable work) {
        final Thread thread = new Thread(work, name);
        thread.setDaemon(true);
        thread.start();
        return thread;
    }

    /** Skips what an earlier run had acknowledged, then hands out batches of at most batchSize events and 8 MiB. */
    private void read(final ExportReader entries, final long skip, final BlockingQueue<List<ExportReader.Entry>> batches)
            throws InterruptedException {
        for (long skipped = 0; skipped < skip && entries.hasNext(); skipped++) {
            entries.next();
        }
        List<ExportReader.Entry> batch = new ArrayList<>();
        long bytes = 0;
        int events = 0;
        while (entries.hasNext() && !stopping) {
            final ExportReader.Entry entry = entries.next();
            batch.add(entry);
            if (entry.event().isPresent()) {
                events++;
                bytes += entry.json().length;
            }
            if (events >= options.batchSize() || bytes >= MAX_BATCH_BYTES) {
                batches.put(batch);
                batch = new ArrayList<>();
                bytes = 0;
                events = 0;
            }
        }
        if (!batch.isEmpty()) {
            batches.put(batch);
        }
    }

    /**
     * Sends the batch's events until Eddy acknowledged all of them or refused some; adds the records that are not
     * events, and the refused events, to {@code refused}.
     *
     * @return how many events Eddy acknowledged
     */
    private long send(final List<ExportReader.Entry> batch, final List<ExportReader.Entry> refused) throws InterruptedException {
        final List<ExportReader.Entry> events = new ArrayList<>(batch.size());
        for (final ExportReader.Entry entry : batch) {
            (entry.event().isPresent() ? events : refused).add(entry);
        }
        progress.sent(batch.size());
        return sendOrSplit(events, refused);
    }

    private long sendOrSplit(final List<ExportReader.Entry> events, final List<ExportReader.Entry> refused)
            throws InterruptedException {
        if (events.isEmpty()) {
            return 0;
        }
        final HttpResponse<String> response = post(events);
        if (response.statusCode() == 200) {
            return events.size();
        }
        // 400 or 413: some event is refused, or the batch is too large. Halve until it is found.
        if (events.size() == 1) {
            final ExportReader.Entry entry = events.get(0);
            refused.add(ExportReader.Entry.rejected(entry.number(), entry.line(), "Eddy refused it (" + response.statusCode()
                    + "): " + response.body().strip(), entry.event().get().toString()));
            return 0;
        }
        final int half = events.size() / 2;
        return sendOrSplit(events.subList(0, half), refused) + sendOrSplit(events.subList(half, events.size()), refused);
    }

    /** Posts the events; answers 200, 400 or 413, retrying everything else until {@link Options#giveUp}. */
    private HttpResponse<String> post(final List<ExportReader.Entry> events) throws InterruptedException {
        // The envelope, then each event's JSON as the reader wrote it.
        final ByteArrayOutputStream body = new ByteArrayOutputStream();
        body.writeBytes(("{\"api_key\":" + Json.mapper().getNodeFactory().textNode(options.token())
                + ",\"historical_migration\":true,\"batch\":[").getBytes(StandardCharsets.UTF_8));
        for (int i = 0; i < events.size(); i++) {
            if (i > 0) {
                body.write(',');
            }
            body.writeBytes(events.get(i).json());
        }
        body.writeBytes("]}".getBytes(StandardCharsets.UTF_8));
        final HttpRequest request = HttpRequest.newBuilder(options.host().resolve("/batch/"))
                .timeout(Duration.ofMinutes(2)).header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofByteArray(body.toByteArray())).build();
        final long firstFailure = System.nanoTime();
        long backoffMillis = 250;
        while (true) {
            String failure;
            long waitMillis = backoffMillis;
            try {
                final HttpResponse<String> response = http.send(request, HttpResponse.BodyHandlers.ofString());
                final int status = response.statusCode();
                if (status == 200 || status == 400 || status == 413) {
                    return response;
                }
                if (status == 401 || status == 403) {
                    throw new ImportException("Eddy refused the project API key (" + status + "): " + response.body().strip());
                }
                failure = status + " " + response.body().strip();
                waitMillis = response.headers().firstValue("Retry-After").map(Importer::seconds)
                        .map(s -> Math.max(s * 1000, 250)).orElse(backoffMillis);
            } catch (final IOException e) {
                failure = e.toString();
            }
            if (Duration.ofNanos(System.nanoTime() - firstFailure).compareTo(options.giveUp()) > 0 || stopping) {
                throw new ImportException("Eddy did not take a batch for " + options.giveUp().toMinutes() + " min (last: "
                        + failure + "); the checkpoint is saved, run the same command again to resume");
            }
            progress.retrying(failure);
            Thread.sleep(waitMillis);
            backoffMillis = Math.min(backoffMillis * 2, 30_000);
        }
    }

    private static long seconds(final String retryAfter) {
        try {
            return Long.parseLong(retryAfter.trim());
        } catch (final NumberFormatException e) {
            return 1;
        }
    }

    /** Events of the project Eddy counts now, or nothing without a personal API key (or when Eddy does not answer). */
    private Optional<Long> visibleEvents() {
        if (options.personalKey().isEmpty() || options.projectId().isEmpty()) {
            return Optional.empty();
        }
        try {
            final HttpResponse<String> response = http.send(HttpRequest.newBuilder(options.host().resolve("/api/projects/"
                            + options.projectId().get() + "/event_counts/")).timeout(Duration.ofSeconds(30))
                    .header("Authorization", "Bearer " + options.personalKey().get()).GET().build(),
                    HttpResponse.BodyHandlers.ofString());
            if (response.statusCode() != 200) {
                return Optional.empty();
            }
            final JsonNode total = Json.mapper().readTree(response.body()).get("total");
            return total != null && total.canConvertToLong() ? Optional.of(total.asLong()) : Optional.empty();
        } catch (final IOException e) {
            return Optional.empty();
        } catch (final InterruptedException e) {
            Thread.currentThread().interrupt();
            return Optional.empty();
        }
    }

    /**
     * Waits until this run's events are visible, or nothing more became visible for {@link Options#settle}: events Eddy
     * already had (a resumed batch, a file imported twice) or dropped by PostHog's rules never show.
     */
    private long awaitVisible(final long baseline, final long expected, final boolean interrupted) throws InterruptedException {
        long last = -1;
        long lastChange = System.nanoTime();
        while (true) {
            final long visible = visibleEvents().map(v -> v - baseline).orElse(last);
            progress.visible(visible + baseline);
            if (visible >= expected || interrupted) {
                return visible;
            }
            if (visible != last) {
                last = visible;
                lastChange = System.nanoTime();
            } else if (Duration.ofNanos(System.nanoTime() - lastChange).compareTo(options.settle()) > 0) {
                return visible;
            }
            progress.render(false);
            Thread.sleep(500);
        }
    }

    Path rejectsFile() {
        final String name = options.state().getFileName().toString();
        return options.state().resolveSibling((name.endsWith(".json") ? name.substring(0, name.length() - 5) : name)
                + ".rejected.jsonl");
    }

    /** Rejections by kind, for the summary: the reason without the record-specific details. */
    Map<String, Long> rejectedByReason() {
        return rejectedByReason;
    }

    private static String reasonKind(final String reason) {
        final int detail = reason.indexOf(':');
        final int value = reason.startsWith("unreadable timestamp") ? "unreadable timestamp".length() : -1;
        return value > 0 ? reason.substring(0, value) : detail > 0 ? reason.substring(0, detail) : reason;
    }
}
