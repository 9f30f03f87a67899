package compare

import (
	"context"

	api "github.com/churon/churon/app/api/compare"
)

// Runner is the comparison service of this process: comparisons run on
// the engine, one model at a time (see Run). Its zero value is ready.
type Runner struct {
	// Exclusive, when set, is asked for the machine before a comparison
	// measures and handed back after (the session's Manager.Exclusive):
	// the answers of the chats wait meanwhile, through the same scheduler,
	// so that the figures are the models' alone.
	Exclusive func(ctx context.Context) (release func(), err error)
}

var _ api.Service = Runner{}

// Start begins a comparison (see Run) and returns at once.
func Start(ctx context.Context, opt api.Options) *api.Handle {
	return Runner{}.Start(ctx, opt)
}

// Start: see the package function; with Exclusive, the comparison holds
// the machine while it runs.
func (r Runner) Start(ctx context.Context, opt api.Options) *api.Handle {
	return api.NewHandle(ctx, func(ctx context.Context, emit func(api.Event)) (*api.Result, error) {
		if r.Exclusive != nil {
			release, err := r.Exclusive(ctx)
			if err != nil {
				return nil, err
			}
			defer release()
		}
		return Run(ctx, opt, emit)
	})
}

// Quantize: see the package function.
func (Runner) Quantize(ctx context.Context, in, out string, opt api.QuantizeOptions) (api.QuantizeReport, error) {
	return Quantize(ctx, in, out, opt)
}

// QuantizeTypes: see the package function.
func (Runner) QuantizeTypes() []string { return QuantizeTypes() }

// QuantizedName: see the package function.
func (Runner) QuantizedName(in, typ string) string { return QuantizedName(in, typ) }

// IsRequantize: see the package function.
func (Runner) IsRequantize(err error) bool { return IsRequantize(err) }

// DefaultSampling: see the package function.
func (Runner) DefaultSampling() api.Sampling { return DefaultSampling() }

var _ api.CrossService = Runner{}

// Cross runs a comparison across engines (RunCross); with Exclusive, it
// holds the machine while it runs, as Start does.
func (r Runner) Cross(ctx context.Context, opt api.CrossOptions) (*api.CrossResult, error) {
	if r.Exclusive != nil {
		release, err := r.Exclusive(ctx)
		if err != nil {
			return nil, err
		}
		defer release()
	}
	return RunCross(ctx, opt)
}
