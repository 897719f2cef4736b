package movielens

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/data"
	"github.com/plumbml/plumb/data/internal/datatest"
)

func tiny100K() map[string][]byte {
	return map[string][]byte{
		"ml-100k/u.data":       []byte("1\t2\t5\t881250949\n2\t1\t3\t891717742\n1\t1\t4\t878887116\n"),
		"ml-100k/u.user":       []byte("1|24|M|technician|85711\n2|53|F|other|94043\n"),
		"ml-100k/u.item":       []byte("1|Toy Story (1995)|01-Jan-1995||http://x|0|0|1\n2|Caf\xe9 Society (1998)|||http://y|1|0|1\n"),
		"ml-100k/u.genre":      []byte("unknown|0\nAction|1\nComedy|2\n\n"),
		"ml-100k/u.occupation": []byte("other\ntechnician\n"),
		"ml-100k/README":       []byte("skipped"),
	}
}

func TestLoadMovieLens100K(t *testing.T) {
	files := tiny100K()
	tree := datatest.WriteFiles(t, files)
	archive := datatest.WriteFiles(t, map[string][]byte{"ml-100k.tar.gz": datatest.TarGz(t, files)})
	for name, src := range map[string]string{
		"tree": tree, "folder": filepath.Join(tree, "ml-100k"), "archive": filepath.Join(archive, "ml-100k.tar.gz"), "folder with archive": archive,
	} {
		t.Run(name, func(t *testing.T) {
			ml, err := Load100K(src)
			require.NoError(t, err)
			assert.Equal(t, []Rating{{1, 2, 5, 881250949}, {2, 1, 3, 891717742}, {1, 1, 4, 878887116}}, ml.Ratings)
			assert.Equal(t, User{ID: 1, Age: 24, Group: 1, Job: 1, Zip: "85711"}, ml.Users[1])
			assert.Equal(t, User{ID: 2, Female: true, Age: 53, Group: 5, Job: 0, Zip: "94043"}, ml.Users[2])
			assert.Equal(t, Movie{ID: 2, Title: "Café Society", Year: 1998, Genres: []int{0, 2}}, ml.Movies[2], "u.item is Latin-1")
			assert.Equal(t, []string{"unknown", "Action", "Comedy"}, ml.Genres)
			assert.Equal(t, []string{"other", "technician"}, ml.Jobs)

			titles, err := TitleVocab(ml)
			require.NoError(t, err)
			assert.Equal(t, []string{"café", "society", "story", "toy", data.Unk}, titles.Words())
			ds, err := ml.Dataset(titles)
			require.NoError(t, err)
			assert.Equal(t, []int64{1, 2, 1}, ds.Tensor("user").Int64s())
			assert.Equal(t, []int64{0, 1, 0}, ds.Tensor("gender").Int64s())
			assert.Equal(t, []int64{1, 5, 1}, ds.Tensor("age").Int64s())
			assert.Equal(t, []int64{1, 0, 1}, ds.Tensor("job").Int64s())
			assert.Equal(t, []int64{2, 1, 1}, ds.Tensor("movie").Int64s())
			assert.Equal(t, []float32{5, 3, 4}, ds.Tensor("score").Float32s())
			assert.Equal(t, []int64{0, 2, 2, 2}, ds.Ragged("genres").Values.Int64s())
			assert.Equal(t, []int64{0, 1, 3, 2, 3, 2}, ds.Ragged("title").Values.Int64s())
		})
	}
}

func TestLoadMovieLens1M(t *testing.T) {
	dir := datatest.WriteFiles(t, map[string][]byte{
		"ml-1m/ratings.dat": []byte("1::1193::5::978300760\n2::1::3::978298413\n"),
		"ml-1m/users.dat":   []byte("1::F::1::10::48067\n2::M::56::16::70072\n"),
		"ml-1m/movies.dat":  []byte("1::Toy Story (1995)::Animation|Children's|Comedy\n1193::One Flew Over the Cuckoo's Nest (1975)::Drama\n"),
	})
	ml, err := Load1M(dir)
	require.NoError(t, err)
	assert.Equal(t, []string{"Animation", "Children's", "Comedy", "Drama"}, ml.Genres)
	assert.Equal(t, Movie{ID: 1, Title: "Toy Story", Year: 1995, Genres: []int{0, 1, 2}}, ml.Movies[1])
	assert.Equal(t, User{ID: 1, Female: true, Age: 1, Group: 0, Job: 10, Zip: "48067"}, ml.Users[1])
	assert.Equal(t, User{ID: 2, Age: 56, Group: 6, Job: 16, Zip: "70072"}, ml.Users[2])
	assert.Equal(t, []Rating{{1, 1193, 5, 978300760}, {2, 1, 3, 978298413}}, ml.Ratings)
}

func TestMovieLensErrors(t *testing.T) {
	tests := []struct {
		name, file, content, wantErr string
	}{
		{name: "fields", file: "u.data", content: "1\t2\t5\n", wantErr: `u.data line 1 has 3 "\t"-separated fields, want 4`},
		{name: "rating", file: "u.data", content: "1\t2\t6\t1\n", wantErr: `u.data line 1: rating "6": want an integer in [1, 5]`},
		{name: "user", file: "u.data", content: "7\t2\t5\t1\n", wantErr: "rating by unknown user 7"},
		{name: "movie", file: "u.data", content: "1\t9\t5\t1\n", wantErr: "rating of unknown movie 9"},
		{name: "gender", file: "u.user", content: "1|24|X|other|1\n", wantErr: `gender "X"`},
		{name: "flag", file: "u.item", content: "1|T (1995)|||u|0|2|0\n", wantErr: `genre flag 1 is "2"`},
		{name: "flags", file: "u.item", content: "1|T (1995)|||u|0|1\n", wantErr: "2 genre flags but u.genre names 3 genres"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			files := tiny100K()
			files["ml-100k/"+tc.file] = []byte(tc.content)
			_, err := Load100K(datatest.WriteFiles(t, files))
			require.ErrorContains(t, err, tc.wantErr)
		})
	}
	files := tiny100K()
	delete(files, "ml-100k/u.item")
	_, err := Load100K(datatest.WriteFiles(t, files))
	assert.ErrorContains(t, err, "no u.item")
	_, err = Load1M(datatest.WriteFiles(t, map[string][]byte{"ml-1m/users.dat": []byte("1::F::2::10::1\n"), "ml-1m/movies.dat": nil, "ml-1m/ratings.dat": nil}))
	assert.ErrorContains(t, err, "age code 2: want one of [1 18 25 35 45 50 56]")
}

// The real MovieLens 100K archive: counts of the README (3.).
func TestRealMovieLens100K(t *testing.T) {
	ml, err := Load100K(datatest.RealPath(t, "movielens/ml-100k.tar.gz"))
	require.NoError(t, err)
	assert.Len(t, ml.Ratings, 100000)
	assert.Len(t, ml.Users, 943)
	assert.Len(t, ml.Movies, 1682)
	assert.Len(t, ml.Genres, 19)
	assert.Len(t, ml.Jobs, 21)
	rated := map[int]bool{}
	for _, r := range ml.Ratings {
		rated[r.Movie] = true
	}
	assert.Len(t, rated, 1682, "every item rated")
	titles, err := TitleVocab(ml)
	require.NoError(t, err)
	ds, err := ml.Dataset(titles)
	require.NoError(t, err)
	t.Logf("MovieLens 100K: %d ratings, %d users, %d movies, %d genres, %d occupations, %d title words; dataset of %d examples",
		len(ml.Ratings), len(ml.Users), len(ml.Movies), len(ml.Genres), len(ml.Jobs), titles.Len(), ds.Len())
}

// MovieLens 1M is not in the shared data (README 3.); the test runs when a copy is added.
func TestRealMovieLens1M(t *testing.T) {
	ml, err := Load1M(datatest.RealPath(t, "movielens/ml-1m"))
	require.NoError(t, err)
	assert.Len(t, ml.Ratings, 1000209)
	assert.Len(t, ml.Users, 6040)
	assert.Len(t, ml.Movies, 3883)
}

// FuzzMovieLens100K: any u.data, u.user and u.item give a set whose
// ratings all name known users and movies, or an error.
func FuzzMovieLens100K(f *testing.F) {
	files := tiny100K()
	f.Add(files["ml-100k/u.data"], files["ml-100k/u.user"], files["ml-100k/u.item"])
	f.Fuzz(func(t *testing.T, ratings, user, item []byte) {
		ml, err := parseMovieLens100K(map[string][]byte{"u.data": ratings, "u.user": user, "u.item": item}, "fuzz", data.Limits{})
		if err != nil {
			return
		}
		for _, r := range ml.Ratings {
			require.Contains(t, ml.Users, r.User)
			require.Contains(t, ml.Movies, r.Movie)
		}
	})
}

// FuzzMovieLens1M is FuzzMovieLens100K for the "::" files.
func FuzzMovieLens1M(f *testing.F) {
	f.Add([]byte("1::1::5::978300760\n"), []byte("1::F::1::10::48067\n"), []byte("1::Toy Story (1995)::Animation|Comedy\n"))
	f.Fuzz(func(t *testing.T, ratings, users, movies []byte) {
		ml, err := parseMovieLens1M(map[string][]byte{"ratings.dat": ratings, "users.dat": users, "movies.dat": movies}, "fuzz", data.Limits{})
		if err != nil {
			return
		}
		for _, r := range ml.Ratings {
			require.Contains(t, ml.Users, r.User)
			require.Contains(t, ml.Movies, r.Movie)
		}
		for _, m := range ml.Movies {
			for _, g := range m.Genres {
				require.True(t, g >= 0 && g < len(ml.Genres), "genre %d of %d", g, len(ml.Genres))
			}
			require.Equal(t, strings.TrimSpace(m.Title), m.Title)
		}
	})
}

// A MovieLens-1M line with an extra "::" is an error naming the file and
// line.
func TestLoad1MRefusesExtraFields(t *testing.T) {
	for file, line := range map[string]string{
		"ratings.dat": "1::1::5::978300760::9",
		"users.dat":   "1::F::1::10::48067::x",
		"movies.dat":  "1::Toy Story (1995)::Animation::Comedy",
	} {
		files := map[string][]byte{
			"ratings.dat": []byte("1::1::5::978300760\n"),
			"users.dat":   []byte("1::F::1::10::48067\n"),
			"movies.dat":  []byte("1::Toy Story (1995)::Animation|Comedy\n"),
		}
		_, err := parseMovieLens1M(files, "ml-1m", data.Limits{})
		require.NoError(t, err)
		files[file] = []byte(line + "\n")
		_, err = parseMovieLens1M(files, "ml-1m", data.Limits{})
		assert.ErrorContains(t, err, "movielens: ml-1m:"+file+" line 1 has ", file)
		assert.ErrorContains(t, err, "-separated fields, want ", file)
	}
}
