package data_test

import (
	"testing"

	"github.com/plumbml/plumb/data"
	"github.com/plumbml/plumb/internal/apicheck"
)

// Every exported function and method of package data, called with zero
// values and nils, returns (an error, or a value carrying one) instead of
// panicking. The table is checked against the package's source.
func TestZeroValuesDoNotPanic(t *testing.T) {
	apicheck.Check(t, ".", apicheck.API{
		Funcs: map[string]any{
			"NewDataset":        data.NewDataset,
			"ReadIDXMax":        data.ReadIDXMax,
			"ReadIDX":           data.ReadIDX,
			"Dir":               data.Dir,
			"LoadMNIST":         data.LoadMNIST,
			"LoadMNISTFS":       data.LoadMNISTFS,
			"DenseField":        data.DenseField,
			"RaggedField":       data.RaggedField,
			"SeqField":          data.SeqField[int64],
			"FromExamples":      data.FromExamples,
			"NewLoader":         data.NewLoader,
			"NewStream":         data.NewStream,
			"LineSource":        data.LineSource,
			"Shuffle":           data.Shuffle,
			"DropLast":          data.DropLast,
			"BalanceBy":         data.BalanceBy,
			"BucketBy":          data.BucketBy,
			"ShuffleBuffer":     data.ShuffleBuffer,
			"Size":              data.Size,
			"Tokenize":          data.Tokenize,
			"NGrams":            data.NGrams,
			"BuildVocab":        data.BuildVocab,
			"NewVocab":          data.NewVocab,
			"LoadVocab":         data.LoadVocab,
			"ReadPTB":           data.ReadPTB,
			"LoadPTB":           data.LoadPTB,
			"PTBVocab":          data.PTBVocab,
			"NGramDataset":      data.NGramDataset,
			"LMDataset":         data.LMDataset,
			"ReadCIFAR10":       data.ReadCIFAR10,
			"LoadCIFAR10":       data.LoadCIFAR10,
			"LoadImageFolder":   data.LoadImageFolder,
			"LoadIMDB":          data.LoadIMDB,
			"IMDBVocab":         data.IMDBVocab,
			"IMDBDataset":       data.IMDBDataset,
			"ReadCoNLL05":       data.ReadCoNLL05,
			"LoadCoNLL05":       data.LoadCoNLL05,
			"SRLLabelVocab":     data.SRLLabelVocab,
			"LoadSRLDicts":      data.LoadSRLDicts,
			"SRLDataset":        data.SRLDataset,
			"LoadMovieLens100K": data.LoadMovieLens100K,
			"LoadMovieLens1M":   data.LoadMovieLens1M,
			"TitleWords":        data.TitleWords,
			"MovieTitleVocab":   data.MovieTitleVocab,
			"ReadParallel":      data.ReadParallel,
			"LoadParallel":      data.LoadParallel,
			"ParallelVocab":     data.ParallelVocab,
			"ParallelDataset":   data.ParallelDataset,
		},
		Types: []any{
			(*data.Dataset)(nil),
			(*data.Batch)(nil),
			(*data.IDX)(nil),
			(*data.Field)(nil),
			(*data.Loader)(nil),
			(*data.Stream)(nil),
			(*data.Option)(nil),
			(*data.Example)(nil),
			(*data.Counter)(nil),
			(*data.VocabConfig)(nil),
			(*data.Vocab)(nil),
			(*data.Review)(nil),
			(*data.SRLExample)(nil),
			(*data.MovieLens)(nil),
			(*data.Rating)(nil),
			(*data.User)(nil),
			(*data.Movie)(nil),
			(*data.Pair)(nil),
		},
	})
}
