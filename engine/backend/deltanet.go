package backend

// DeltaNet is the shape of one Gated DeltaNet layer (Qwen3-Next, Qwen 3.5:
// linear attention with a recurrent state, llama.cpp's
// build_layer_attn_linear and ggml_gated_delta_net), with its small
// per-layer parameters, which a device copies where it needs them (like
// Rope's FreqFactors).
//
// Per token t of a sequence, from the projections qkv (ConvDim values),
// alpha and beta (VHeads values each):
//
//	c      = silu(causal depthwise conv of qkv over the last ConvKernel tokens)
//	q, k   = the first two KHeads×HeadDim parts of c, each head L2-normalised
//	v      = the rest: VHeads×HeadDim
//	g[h]   = softplus(alpha[h] + DTBias[h]) · A[h]      (A is negative)
//	b[h]   = sigmoid(beta[h])
//	S_h    ← S_h · exp(g[h])
//	S_h    ← S_h + k_j (b[h] (v_h − S_hᵀ k_j))ᵀ         (j = h mod KHeads)
//	out_h  = S_hᵀ q_j / √HeadDim
//
// S_h is a HeadDim×HeadDim F32 matrix per value head. Value head h reads
// key head h mod KHeads: the tiled order llama.cpp's converter writes.
type DeltaNet struct {
	KHeads, VHeads int
	HeadDim        int
	ConvKernel     int     // taps of the convolution (4)
	Eps            float32 // of the L2 norms (the model's RMS epsilon)
	// Conv is the convolution's kernel, tap-major: ConvKernel rows of
	// ConvDim, tap 0 applying to the oldest input (the file's ssm_conv1d
	// is channel-major: taps per channel). DTBias and A have VHeads
	// values.
	Conv      []float32
	DTBias, A []float32
}

// ConvDim is the width of the projection the convolution runs over:
// queries, keys and values.
func (d *DeltaNet) ConvDim() int { return (2*d.KHeads + d.VHeads) * d.HeadDim }

// ValueDim is the width of the output: VHeads×HeadDim.
func (d *DeltaNet) ValueDim() int { return d.VHeads * d.HeadDim }

// ConvStateLen is the float32 values of the convolution's state: the last
// ConvKernel−1 inputs, oldest first, ConvDim each.
func (d *DeltaNet) ConvStateLen() int { return (d.ConvKernel - 1) * d.ConvDim() }

// StateBytes is a sequence's state of the layer: the convolution's inputs
// (ConvStateLen values), then VHeads matrices of HeadDim×HeadDim, each
// stored as ggml stores it, row j holding column j of S (S[i][j] at
// j·HeadDim + i). All float32, little-endian.
func (d *DeltaNet) StateBytes() int {
	return 4 * (d.ConvStateLen() + d.VHeads*d.HeadDim*d.HeadDim)
}

// DeltaNetRunner is a Device that runs Gated DeltaNet layers. It is
// optional: the planner keeps such layers on the CPU where the device
// lacks it.
type DeltaNetRunner interface {
	// DeltaNet runs n tokens of one sequence through the layer d: qkv is
	// n×ConvDim, alpha and beta n×VHeads (the projections, before any
	// activation); st is the sequence's state (StateBytes, made by this
	// device), advanced by the n tokens; dst gets n×ValueDim outputs.
	DeltaNet(dst, qkv, alpha, beta Buf, st State, n int, d *DeltaNet)
}
