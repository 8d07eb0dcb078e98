package dev.eddy.topology;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.apache.kafka.streams.errors.ProcessorStateException;
import org.apache.kafka.streams.errors.StreamsException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class StateDirFailureTest {
    @TempDir
    Path dir;

    @Test
    void aWritableDirectoryIsCreatedAndLeftWithoutTheProbe() throws IOException {
        final Path state = dir.resolve("state/app");
        StateDirFailure.requireWritable(state);
        try (var files = Files.list(state)) {
            assertThat(files).isEmpty();
        }
    }

    @Test
    void aPathTakenByAFileIsRefusedSayingWhere() throws IOException {
        // Permissions cannot show it when the tests run as root; a file where the directory should be fails for anyone.
        Files.writeString(dir.resolve("state"), "not a directory");
        assertThatThrownBy(() -> StateDirFailure.requireWritable(dir.resolve("state/app")))
                .isInstanceOf(StateDirFailure.class)
                .hasMessage("the state directory " + dir.resolve("state/app") + " cannot be written: FileSystemException: " + dir.resolve("state/app") + ": Not a directory");
    }

    @Test
    void storageFailuresAreToldFromOtherThreadFailures() {
        final StreamsException flush = new StreamsException(new ProcessorStateException("Error while executing flush from store hourly-counts",
                new IOException("No space left on device")));
        assertThat(StateDirFailure.reason(flush)).contains("IOException: No space left on device");
        assertThat(StateDirFailure.reason(new ProcessorStateException("task directory [0_1] doesn't exist and couldn't be created")))
                .contains("ProcessorStateException: task directory [0_1] doesn't exist and couldn't be created");
        assertThat(StateDirFailure.reason(new StreamsException(new org.apache.kafka.common.errors.TimeoutException("broker away"))))
                .isEmpty();
        assertThat(StateDirFailure.reason(new IllegalStateException("a bug"))).isEmpty();
    }
}
