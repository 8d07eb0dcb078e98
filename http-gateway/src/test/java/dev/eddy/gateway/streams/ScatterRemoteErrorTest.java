package dev.eddy.gateway.streams;

import static org.assertj.core.api.Assertions.assertThat;

import dev.eddy.gateway.http.ApiError;
import io.vertx.core.buffer.Buffer;
import dev.eddy.topology.Endpoint;
import org.junit.jupiter.api.Test;

class ScatterRemoteErrorTest {
    private static final Endpoint PEER = new Endpoint("10.0.0.7", 8101);

    @Test
    void anInstanceWithoutThePartialIsAnOlderVersionAndRetried() {
        final ApiError error = Scatter.remoteError(PEER, 404, Buffer.buffer("{\"detail\":\"No such partial.\"}"));
        assertThat(error.status()).isEqualTo(503);
        assertThat(error.code()).isEqualTo("instance_outdated");
        assertThat(error.getMessage()).contains("10.0.0.7:8101");
    }

    @Test
    void anInstanceOfAnotherProtocolVersionIsRetriedTheSameWay() {
        final ApiError error = Scatter.remoteError(PEER, InternalProtocol.OTHER_VERSION,
                Buffer.buffer("{\"code\":\"protocol_version\",\"detail\":\"This instance speaks version 2.\"}"));
        assertThat(error.status()).isEqualTo(503);
        assertThat(error.code()).isEqualTo("instance_outdated");
    }

    @Test
    void refusalsKeepTheirMeaningAndTheUnexpectedIsAnInternalError() {
        assertThat(Scatter.remoteError(PEER, 503, Buffer.buffer()).code()).isEqualTo("store_not_ready");
        final ApiError tooLarge = Scatter.remoteError(PEER, 400, Buffer.buffer("{\"detail\":\"Too many intervals.\"}"));
        assertThat(tooLarge.status()).isEqualTo(400);
        assertThat(tooLarge.getMessage()).isEqualTo("Too many intervals.");
        assertThat(Scatter.remoteError(PEER, 504, Buffer.buffer()).status()).isEqualTo(504);
        assertThat(Scatter.remoteError(PEER, 409, Buffer.buffer()).status()).isEqualTo(409);
        assertThat(Scatter.remoteError(PEER, 500, Buffer.buffer("boom")).status()).isEqualTo(500);
    }
}
