"""LuongAttention: global and local (monotonic / predictive) multiplicative attention."""

import keras
from keras import ops

from zoo.layers import arguments, masking
from zoo.layers import scores as scores_lib
from zoo.layers.bahdanau_attention import ProjectedKeyAttention
from zoo.layers.initializers import fresh_weights

LUONG_SCORES = ("dot", "general", "concat", "location", "cosine")
WINDOWS = (None, "local-m", "local-p")
COSINE_SHARPNESS = 5.0


@keras.saving.register_keras_serializable(package="zoo")
class LuongAttention(ProjectedKeyAttention):
    """Luong attention: global, or local with a window around an aligned position.

    Scores between a query `h_t` (the decoder state) and the source states `h_s`
    (`score=`):

    - `"dot"`: `h_t . h_s` (needs `dq == dk`);
    - `"general"`: `h_t^T W_a h_s`;
    - `"concat"`: `v_a^T tanh(W_a [h_t; h_s])`, computed as
      `v_a^T tanh(W_q h_t + W_k h_s)` with hidden size `units`;
    - `"cosine"`: `beta * cos(h_t, h_s)`, content-based addressing (Graves et al.
      2014), with a learned sharpness `beta` initialised to 5 (cosines lie in
      [-1, 1]: a softmax over them alone is nearly uniform); needs `dq == dk`;
    - `"location"`: `a_t = W_a h_t`, from the query only; `W_a` has one row per source
      position, so the maximum source length is taken from the value shape at build
      time (it must be known) and shorter sources use its first `Tv` scores.

    `scale=True` multiplies the scores by a learned scalar (initialised to 1), as
    `keras.layers.Attention(use_scale=True)` does.

    Global attention (`window=None`) normalises over all unpadded source positions.
    Local attention (`window="local-m"` or `"local-p"`) attends only to the positions
    `s` with `abs(s - p_t) <= D` (`D = window_size`), and multiplies the weights by the
    Gaussian factor `exp(-(s - p_t)^2 / (2 sigma^2))`, `sigma = D / 2`:

    - `"local-m"` (monotonic): `p_t = t`, the position of the query (in `attend`, the
      decoder step given as `position`, plus the row index for multi-row queries);
    - `"local-p"` (predictive): `p_t = S * sigmoid(v_p^T tanh(W_p h_t))` with `S` the
      source length, the actual unpadded length when a value mask is given.

    As in the paper the weights are not renormalised after the Gaussian factor (they
    sum to at most 1), and `p_t` receives gradients through the Gaussian factor only.

    `project_keys` / `attend` let a decoder project the source once per sequence
    (`general`: `W_a^T h_s`; `concat`: `W_k h_s`) and score each step against it;
    `call()` goes through the same two methods.

    Masking: a padded key (value mask False) or a key outside the local window gets
    exactly zero weight; a query with no allowed key gets all-zero weights and a zero
    context; padded query rows get zero weights and a zero context. The query mask is
    passed on as the output mask.

    Args:
        score: `"dot"`, `"general"`, `"concat"`, `"location"` or `"cosine"`.
        units: hidden size of `"concat"` and of the `"local-p"` position network
            (default: the query depth). Not used otherwise.
        scale: learn a scalar that multiplies the scores.
        window: `None` (global), `"local-m"` or `"local-p"`.
        window_size: the half-width `D` of the local window (positive int).
        window_gaussian: multiply local weights by the Gaussian factor (default True;
            the paper applies it in `"local-p"` only, set False for a paper-exact
            `"local-m"`).
        window_gather: with a local window, whether to score only the `2D + 1`
            source positions around `round(p_t)` (gathered), so that a step costs
            O(D) in the source length instead of O(Tv): `"auto"` (default) gathers
            for single-step queries (a decoder step, `attend` with a `(B, dq)`
            query) and scores every position, then masks, for multi-row queries
            (teacher forcing, where one matrix product over all positions is faster
            than gathering `Tq * (2D + 1)` keys); `True` always gathers, `False`
            never. The weights are the same to float rounding, and are returned as
            `(.., Tv)` either way.
        probability: `"softmax"`, `"hardmax"` or `"gumbel"` (see
            `zoo.layers.probability`). With a local window the hard variants select the
            argmax of `score + log(Gaussian factor)`, i.e. the position whose soft
            weight would be largest, and give it weight 1.
        kernel_initializer: initializer of the weight matrices and vectors.
        seed: seed of the Gumbel noise (`probability="gumbel"`).
        **kwargs: base `keras.layers.Layer` arguments.

    Call arguments:
        inputs: `[query, value]` or `[query, value, key]`; query `(B, Tq, dq)` or a
            single step `(B, dq)`, value `(B, Tv, dv)`, key `(B, Tv, dk)` (defaults to
            value).
        mask: `[query_mask, value_mask]`; either may be `None`.
        return_attention_scores: also return the attention weights.
        training: Python bool (matters for `"hardmax"`/`"gumbel"`).

    Returns:
        The context `(B, Tq, dv)` (or `(B, dv)`) and, with
        `return_attention_scores=True`, the weights `(B, Tq, Tv)` (or `(B, Tv)`).

    Example:

    >>> layer = LuongAttention(score="general", window="local-p", window_size=2)
    >>> query = np.random.rand(2, 3, 4).astype("float32")
    >>> value = np.random.rand(2, 7, 6).astype("float32")
    >>> tuple(layer([query, value]).shape)
    (2, 3, 6)

    Reference:
        Luong, Pham and Manning, "Effective Approaches to Attention-based Neural
        Machine Translation", EMNLP 2015 (sections 3.1 and 3.2). The cosine score:
        Graves, Wayne and Danihelka, "Neural Turing Machines", 2014 (content-based
        addressing).

    Departures from the paper: the layer returns the context `c_t` only; the
    attentional state `tanh(W_c [c_t; h_t])` and input feeding belong to the decoder.
    Positions are 0-based (`p_t = t` for the first query row is 0). The Gaussian factor
    is applied to `"local-m"` too unless `window_gaussian=False`.
    """

    def __init__(
        self,
        score="dot",
        units=None,
        scale=False,
        window=None,
        window_size=10,
        window_gaussian=True,
        probability="softmax",
        kernel_initializer="glorot_uniform",
        seed=None,
        window_gather="auto",
        **kwargs,
    ):
        super().__init__(probability=probability, seed=seed, **kwargs)
        arguments.check_one_of(LUONG_SCORES, score=score)
        arguments.check_one_of(WINDOWS, window=window)
        arguments.check_positive_ints(window_size=window_size)
        arguments.check_optional_positive_ints(units=units)
        if units is not None and score != "concat" and window != "local-p":
            raise ValueError(
                "units is used only by score='concat' and window='local-p'. "
                f"Received: units={units!r}, score={score!r}, window={window!r}"
            )
        arguments.check_one_of((True, False, "auto"), window_gather=window_gather)
        self.score = score
        self.units = units
        self.scale = bool(scale)
        self.window = window
        self.window_size = window_size
        self.window_gaussian = bool(window_gaussian)
        self.window_gather = window_gather
        self.kernel_initializer = keras.initializers.get(kernel_initializer)

    def build(self, input_shape):
        query_dim, key_dim, value_shape = self._depths(input_shape)
        hidden = self.units or query_dim
        weight = fresh_weights(self, self.kernel_initializer)  # each its own draw

        self.kernel = self.query_kernel = self.key_kernel = self.attention_v = None
        self.scale_weight = self.position_kernel = self.position_v = None
        self.max_length = None
        if self.score in ("dot", "cosine") and query_dim != key_dim:
            raise ValueError(
                f"score={self.score!r} needs query and key of the same depth; use "
                "score='general' otherwise. "
                f"Received: query depth {query_dim!r}, key depth {key_dim!r}"
            )
        if self.score == "general":
            # Stored as (dk, dq) so that project_keys(k) = k @ kernel = (W_a^T k).
            self.kernel = weight("kernel", (key_dim, query_dim))
        elif self.score == "concat":
            self.query_kernel = weight("query_kernel", (query_dim, hidden))
            self.key_kernel = weight("key_kernel", (key_dim, hidden))
            self.attention_v = weight("attention_v", (hidden,))
        elif self.score == "location":
            max_length = value_shape[-2] if len(value_shape) >= 2 else None
            if max_length is None:
                raise ValueError(
                    "score='location' needs a fixed maximum source length: give the "
                    "value a static length (e.g. keras.Input(shape=(max_len, d))). "
                    f"Received: value shape {tuple(value_shape)!r}"
                )
            self.max_length = int(max_length)
            self.kernel = weight("kernel", (query_dim, self.max_length))
        if self.scale or self.score == "cosine":
            start = COSINE_SHARPNESS if self.score == "cosine" else 1.0
            initializer = keras.initializers.Constant(start)
            self.scale_weight = self.add_weight(name="scale", initializer=initializer)
        if self.window == "local-p":
            self.position_kernel = weight("position_kernel", (query_dim, hidden))
            self.position_v = weight("position_v", (hidden,))

    def project_keys(self, key):
        """Projects the keys once per sequence (`general`: `(B, Tv, dq)`; `concat`:
        `(B, Tv, units)`; `dot` and `location`: the keys unchanged)."""
        self._check_built("project_keys")
        key = ops.cast(key, self.compute_dtype)
        if self.score == "general":
            return ops.matmul(key, self._weight(self.kernel))
        if self.score == "concat":
            return ops.matmul(key, self._weight(self.key_kernel))
        return key

    def _scores(self, query, keys, source_length):
        """Scores `(..., Tq, Tv)` of queries `(..., Tq, dq)` and projected keys
        `(..., Tv, dk)`: all keys `(B, Tv, dk)`, or the keys gathered for each query
        row `(B, Tq, W, dk)` with the query rows `(B, Tq, 1, dq)`."""
        if self.score in ("dot", "general"):
            scores = scores_lib.dot_score(query, keys)
        elif self.score == "cosine":
            scores = scores_lib.cosine_score(query, keys)
        elif self.score == "concat":
            processed = ops.matmul(query, self._weight(self.query_kernel))
            scores = scores_lib.concat_score(
                processed, keys, self._weight(self.attention_v)
            )
        else:
            if isinstance(source_length, int) and source_length > self.max_length:
                raise ValueError(
                    "score='location' was built for sources of at most "
                    f"{self.max_length} positions. "
                    f"Received: source length {source_length!r}"
                )
            kernel = self._weight(self.kernel)
            scores = scores_lib.location_score(query, kernel, source_length)
        if self.scale_weight is not None:
            scores = scores * self._weight(self.scale_weight)
        return scores  # (B, Tq, Tv)

    def aligned_position(self, query, value_mask=None, source_length=None, position=0):
        """`p_t` of the local window, `(B or 1, Tq, 1)` floats.

        `local-m`: `position + t` for query row `t`; `local-p`:
        `S * sigmoid(v_p^T tanh(W_p h_t))`. Computed in float32 under a 16-bit
        policy (`masking.precise_dtype`), so positions stay exact.
        """
        dtype = masking.precise_dtype(self.compute_dtype)
        if self.window == "local-m":
            rows = ops.cast(ops.arange(ops.shape(query)[1]), dtype)  # (Tq,)
            start = ops.cast(ops.convert_to_tensor(position), dtype)
            start = ops.reshape(start, (-1, 1))  # (B or 1, 1)
            return ops.expand_dims(start + rows, axis=-1)  # (B or 1, Tq, 1)
        kernel = ops.cast(self.position_kernel, dtype)
        hidden = ops.tanh(ops.matmul(ops.cast(query, dtype), kernel))
        v = ops.cast(self.position_v, dtype)
        gate = ops.sigmoid(ops.sum(hidden * v, axis=-1, keepdims=True))  # (B, Tq, 1)
        if value_mask is not None:
            length = ops.sum(ops.cast(value_mask, dtype), axis=-1)  # (B,)
            length = ops.reshape(length, (-1, 1, 1))
        else:
            length = ops.cast(source_length, dtype)
        return length * gate

    def _window(self, distance):
        """The window mask `distance <= D` and the log Gaussian factor (`None`
        without `window_gaussian`) of the distances `abs(s - p_t)` to the centre."""
        dtype = masking.precise_dtype(self.compute_dtype)
        half_width = float(self.window_size)
        inside = distance <= ops.cast(half_width, dtype)
        if not self.window_gaussian:
            return inside, None
        # Clamp outside the window (masked anyway) so no dtype ever overflows.
        distance = ops.minimum(distance, ops.cast(half_width + 1.0, dtype))
        sigma = half_width / 2.0
        return inside, -ops.square(distance) / ops.cast(2.0 * sigma * sigma, dtype)

    def _normalise(self, scores, mask, log_gauss, training):
        """Weights from scores: the Gaussian factor multiplies soft weights, and is
        added (as its log) to the scores of the hard variants."""
        if self.probability == "softmax":
            weights = masking.masked_softmax(scores, mask)
            if log_gauss is not None:
                weights = weights * ops.cast(ops.exp(log_gauss), weights.dtype)
            return weights
        if log_gauss is not None:
            scores = scores + ops.cast(log_gauss, scores.dtype)
        return self._probabilities(scores, mask, training)

    def attend(
        self,
        query,
        keys,
        value,
        value_mask=None,
        position=None,
        training=None,
        query_mask=None,
    ):
        """Attends with precomputed `keys = project_keys(key)`.

        Args:
            query: `(B, dq)` (one decoder step) or `(B, Tq, dq)`.
            keys: the output of `project_keys`.
            value: `(B, Tv, dv)`.
            value_mask: `(B, Tv)` boolean or `None`.
            position: for `window="local-m"`: the decoder step `t` of the (first)
                query row, an int or a `(B,)` tensor. Required for single-step queries
                with `local-m`; defaults to 0 for multi-row queries.
            training: Python bool.
            query_mask: `(B,)` / `(B, Tq)` boolean or `None`.

        Returns:
            `(context, weights)`: `(B, dv)` and `(B, Tv)` for a single-step query,
            `(B, Tq, dv)` and `(B, Tq, Tv)` otherwise.
        """
        single_step = len(query.shape) == 2
        if self.window == "local-m" and position is None:
            if single_step:
                raise ValueError(
                    "window='local-m' needs the decoder step for a single-step query: "
                    f"pass attend(..., position=t). Received: position={position!r}"
                )
            position = 0
        query = ops.cast(query, self.compute_dtype)
        value = ops.cast(value, self.compute_dtype)
        if single_step:
            query = ops.expand_dims(query, axis=1)  # (B, 1, dq)
        source_length = value.shape[-2] or ops.shape(value)[-2]
        gather = self.window_gather is True or (
            self.window_gather == "auto" and single_step
        )
        args = (query, keys, value, value_mask, source_length, position, training)
        if self.window is not None and gather and self.score != "location":
            context, weights = self._attend_gathered(*args)
        else:
            context, weights = self._attend_all(*args)
        if single_step:
            context = ops.squeeze(context, axis=1)
            weights = ops.squeeze(weights, axis=1)
        return masking.zero_padded_queries(query_mask, context, weights)

    def _attend_all(
        self, query, keys, value, value_mask, source_length, position, training
    ):
        """Scores every source position, then masks: `(context, weights)`."""
        scores = self._scores(query, keys, source_length)  # (B, Tq, Tv)
        mask = masking.attention_mask(value_mask=value_mask)  # (B, 1, Tv)
        log_gauss = None
        if self.window is not None:
            p = self.aligned_position(query, value_mask, source_length, position)
            dtype = masking.precise_dtype(self.compute_dtype)
            positions = ops.cast(ops.arange(source_length), dtype)  # (Tv,)
            inside, log_gauss = self._window(ops.abs(positions - p))  # (B|1, Tq, Tv)
            mask = masking.merge_masks(mask, inside)
        weights = self._normalise(scores, mask, log_gauss, training)
        return ops.matmul(weights, value), weights  # (B, Tq, dv)

    def _attend_gathered(
        self, query, keys, value, value_mask, source_length, position, training
    ):
        """Local attention over the `W = 2D + 1` positions around `round(p_t)` only.

        Returns `(context (B, Tq, dv), weights (B, Tq, Tv))`; the weights outside
        the gathered window are exactly 0 (scattered back into `Tv` positions).
        """
        dtype = masking.precise_dtype(self.compute_dtype)
        batch = ops.shape(value)[0]
        rows = ops.shape(query)[1]
        width = 2 * self.window_size + 1
        p = self.aligned_position(query, value_mask, source_length, position)
        p = ops.broadcast_to(p, (batch, rows, 1))  # (B, Tq, 1)
        offsets = ops.arange(-self.window_size, self.window_size + 1)  # (W,)
        # |s - p| <= D for integer s implies |s - round(p)| <= D: the window holds
        # every allowed position.
        center = ops.cast(ops.round(p), "int32")
        index = center + ops.cast(offsets, "int32")  # (B, Tq, W)
        inside = (index >= 0) & (index < source_length)
        index = ops.clip(index, 0, ops.cast(source_length, "int32") - 1)
        within, log_gauss = self._window(ops.abs(ops.cast(index, dtype) - p))
        inside = inside & within  # (B, Tq, W)
        if value_mask is not None:
            inside = inside & _gather_rows(ops.cast(value_mask, "bool"), index)
        window_keys = _gather_rows(keys, index)  # (B, Tq, W, dk)
        window_values = _gather_rows(value, index)  # (B, Tq, W, dv)
        scores = self._scores(ops.expand_dims(query, 2), window_keys, None)
        scores = ops.squeeze(scores, axis=2)  # (B, Tq, W)
        weights = self._normalise(scores, inside, log_gauss, training)
        weights = ops.cast(weights, value.dtype)
        context = ops.sum(ops.expand_dims(weights, -1) * window_values, axis=2)
        # Back to (B, Tq, Tv), scattered (the clipped duplicates at the edges carry
        # weight 0, and duplicates are summed).
        b, q, _ = ops.meshgrid(
            ops.arange(batch, dtype="int32"),
            ops.arange(rows, dtype="int32"),
            ops.arange(width, dtype="int32"),
            indexing="ij",
        )  # (B, Tq, W) each
        where = ops.reshape(ops.stack([b, q, index], axis=-1), (-1, 3))
        dense = ops.scatter(
            where, ops.reshape(weights, (-1,)), (batch, rows, source_length)
        )
        return context, dense

    def get_config(self):
        return {**super().get_config(), **arguments.argument_config(self)}


def _gather_rows(values, index):
    """`values[b, index[b, q, w]]`: `(B, T, ...)` gathered by `(B, Tq, W)` indices
    into `(B, Tq, W, ...)`."""
    batch, length = ops.shape(values)[0], ops.shape(values)[1]
    offsets = ops.reshape(ops.arange(batch, dtype="int32") * length, (-1, 1, 1))
    flat = ops.reshape(values, (batch * length, *values.shape[2:]))
    picked = ops.take(flat, ops.reshape(index + offsets, (-1,)), axis=0)
    return ops.reshape(picked, (*ops.shape(index), *values.shape[2:]))
